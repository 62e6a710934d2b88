import { Module } from '@nestjs/common';
import { typedConfigProvider } from '@app/common';
import { FeaturesModule } from '@app/features';
import { ScoringModule } from '@app/scoring';
import { PipelineConfig } from './pipeline.config';
import { RankService } from './rank/rank.service';
import { SceneRegistry } from './scene/scene-registry';

@Module({
  imports: [FeaturesModule, ScoringModule],
  providers: [typedConfigProvider(PipelineConfig), SceneRegistry, RankService],
  exports: [SceneRegistry, RankService, PipelineConfig],
})
export class PipelineModule {}
