import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { KafkaConfig, MetricsModule, typedConfigProvider } from '@app/common';
import { PipelineModule } from '@app/pipeline';
import { ScoringModule } from '@app/scoring';
import { BatchScorerConfig } from './batch-scorer.config';
import { BatchScorerMetrics } from './batch-scorer.metrics';
import { MetricsServer } from './metrics/metrics-server';
import { RankMessageHandler } from './rank/rank-message.handler';
import { RankRequestConsumer } from './rank/rank-request.consumer';

/** Same libs as the HTTP app; only the edge differs (a Kafka consumer instead of controllers). */
@Module({
  imports: [
    ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true }),
    MetricsModule,
    PipelineModule,
    // The engine's queue fill is what the consumer's admission gate watches.
    ScoringModule,
  ],
  providers: [
    typedConfigProvider(KafkaConfig),
    typedConfigProvider(BatchScorerConfig),
    BatchScorerMetrics,
    RankMessageHandler,
    RankRequestConsumer,
    MetricsServer,
  ],
})
export class BatchScorerModule {}
