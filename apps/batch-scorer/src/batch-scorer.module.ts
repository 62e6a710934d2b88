import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { KafkaConfig, MetricsModule, typedConfigProvider } from '@app/common';
import { PipelineModule } from '@app/pipeline';
import { BatchScorerConfig } from './batch-scorer.config';

/** Same libs as the HTTP app; only the transport differs. */
@Module({
  imports: [
    ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true }),
    MetricsModule,
    PipelineModule,
  ],
  providers: [typedConfigProvider(KafkaConfig), typedConfigProvider(BatchScorerConfig)],
})
export class BatchScorerModule {}
