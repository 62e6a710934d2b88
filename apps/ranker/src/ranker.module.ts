import { DynamicModule, Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { TerminusModule } from '@nestjs/terminus';
import { MetricsModule, typedConfigProvider } from '@app/common';
import { FeatureUpdatesModule } from '@app/features';
import { PipelineModule } from '@app/pipeline';
import { AdminModule } from './admin/admin.module';
import { HealthController } from './health/health.controller';
import { MetricsController } from './metrics/metrics.controller';
import { RankController } from './rank/rank.controller';
import { RankerConfig } from './ranker.config';

@Module({})
export class RankerModule {
  /** The admin API exists only with an admin token (RankerConfig.adminEnabled). */
  static forRoot({ adminEnabled }: Pick<RankerConfig, 'adminEnabled'>): DynamicModule {
    return {
      module: RankerModule,
      imports: [
        ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true }),
        TerminusModule,
        MetricsModule,
        PipelineModule,
        // Real-time feature updates (FEATURE_UPDATES_ENABLED): the HTTP app keeps its item cache fresh.
        FeatureUpdatesModule,
        ...(adminEnabled ? [AdminModule] : []),
      ],
      controllers: [RankController, HealthController, MetricsController],
      providers: [typedConfigProvider(RankerConfig)],
    };
  }
}
