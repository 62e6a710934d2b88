import { Module } from '@nestjs/common';
import { InlineScoringEngine } from './inline-scoring-engine';
import { ScoringEngine } from './scoring-engine.port';

@Module({
  providers: [{ provide: ScoringEngine, useClass: InlineScoringEngine }],
  exports: [ScoringEngine],
})
export class ScoringModule {}
