import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { TerminusModule } from '@nestjs/terminus';
import { typedConfigProvider } from '@app/common';
import { PipelineModule } from '@app/pipeline';
import { HealthController } from './health/health.controller';
import { RankController } from './rank/rank.controller';
import { RankerConfig } from './ranker.config';

@Module({
  imports: [
    ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true }),
    TerminusModule,
    PipelineModule,
  ],
  controllers: [RankController, HealthController],
  providers: [typedConfigProvider(RankerConfig)],
})
export class RankerModule {}
