import { Module } from '@nestjs/common';
import { typedConfigProvider } from '@app/common';
import { FeaturesModule } from '@app/features';
import { ScoringModule } from '@app/scoring';
import { PipelineConfig } from './pipeline.config';
import { PipelineMetrics } from './pipeline.metrics';
import { RankService } from './rank/rank.service';
import { BundlePoller } from './registry/bundle-poller';
import { RegistryMetrics } from './registry/registry.metrics';
import { ReloadBroadcast } from './registry/reload-broadcast';
import { SceneRegistry } from './registry/scene-registry';

@Module({
  imports: [FeaturesModule, ScoringModule],
  providers: [
    typedConfigProvider(PipelineConfig),
    PipelineMetrics,
    RegistryMetrics,
    SceneRegistry,
    BundlePoller,
    ReloadBroadcast,
    RankService,
  ],
  exports: [SceneRegistry, RankService, PipelineConfig, PipelineMetrics],
})
export class PipelineModule {}
