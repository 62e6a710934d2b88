import { Module } from '@nestjs/common';
import { typedConfigProvider } from '@app/common';
import { FeaturesModule } from '@app/features';
import { ScoringModule } from '@app/scoring';
import { PipelineConfig } from './pipeline.config';
import { PipelineMetrics } from './pipeline.metrics';
import { RankService } from './rank/rank.service';
import { SceneRegistry } from './scene/scene-registry';

@Module({
  imports: [FeaturesModule, ScoringModule],
  providers: [typedConfigProvider(PipelineConfig), PipelineMetrics, SceneRegistry, RankService],
  exports: [SceneRegistry, RankService, PipelineConfig, PipelineMetrics],
})
export class PipelineModule {}
