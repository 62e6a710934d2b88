import { DynamicModule, Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { TerminusModule } from '@nestjs/terminus';
import { MetricsModule, typedConfigProvider } from '@app/common';
import { FeatureUpdatesModule } from '@app/features';
import { PipelineModule } from '@app/pipeline';
import { AdminPageModule } from './admin-page/admin-page.module';
import { AdminModule } from './admin/admin.module';
import { HealthController } from './health/health.controller';
import { MetricsController } from './metrics/metrics.controller';
import { RankController } from './rank/rank.controller';
import { RankerConfig } from './ranker.config';

@Module({})
export class RankerModule {
  /** The admin API and the /admin page exist only with an admin token (AdminConfig.enabled). */
  static forRoot({ adminEnabled }: { adminEnabled: boolean }): DynamicModule {
    return {
      module: RankerModule,
      imports: [
        ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true }),
        TerminusModule,
        MetricsModule,
        PipelineModule,
        // Real-time feature updates (FEATURE_UPDATES_ENABLED): the HTTP app keeps its item cache fresh.
        FeatureUpdatesModule,
        ...(adminEnabled ? [AdminModule, AdminPageModule] : []),
      ],
      controllers: [RankController, HealthController, MetricsController],
      providers: [typedConfigProvider(RankerConfig)],
    };
  }
}
