import { Module } from '@nestjs/common';
import { typedConfigProvider } from '@app/common';
import { ScoringEngine } from './scoring-engine.port';
import { ScoringConfig } from './scoring.config';
import { ScoringMetrics } from './scoring.metrics';
import { WorkerScoringEngine } from './worker-scoring-engine';

/** Binds ScoringEngine to the worker-thread engine; only the port leaves the module. */
@Module({
  providers: [
    typedConfigProvider(ScoringConfig),
    ScoringMetrics,
    WorkerScoringEngine,
    { provide: ScoringEngine, useExisting: WorkerScoringEngine },
  ],
  exports: [ScoringEngine],
})
export class ScoringModule {}
