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
import { SceneTrafficControl } from './registry/scene-traffic';
import { trafficStoreProviders, TrafficRedisLifecycle } from './registry/traffic-store.providers';
import { RolloutMetrics } from './rollout/rollout.metrics';
import { ShadowMetrics } from './rollout/shadow.metrics';
import { ShadowRunner } from './rank/shadow-runner';

@Module({
  imports: [FeaturesModule, ScoringModule],
  providers: [
    typedConfigProvider(PipelineConfig),
    PipelineMetrics,
    RegistryMetrics,
    SceneRegistry,
    BundlePoller,
    ReloadBroadcast,
    RolloutMetrics,
    ShadowMetrics,
    ...trafficStoreProviders,
    TrafficRedisLifecycle,
    SceneTrafficControl,
    ShadowRunner,
    RankService,
  ],
  exports: [
    SceneRegistry,
    SceneTrafficControl,
    RankService,
    PipelineConfig,
    PipelineMetrics,
    RolloutMetrics,
    ShadowMetrics,
  ],
})
export class PipelineModule {}
