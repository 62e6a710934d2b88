import { Injectable, Logger } from '@nestjs/common';
import { ThrottledWarnings } from '@app/common';
import { FeaturesMetrics, FeatureStore } from '@app/features';
import { ScoringEngine } from '@app/scoring';
import { PipelineConfig } from '../pipeline.config';
import { SceneRegistry } from '../scene/scene-registry';
import { scoreScene } from '../scene/scene-scorer';
import { FeatureFrame } from '../transforms/feature-frame';
import { RankedItem, RankRequest, RankResult } from './rank-request';

/** The rank path shared by the HTTP app and the Kafka worker. */
@Injectable()
export class RankService {
  private readonly warnings = new ThrottledWarnings(new Logger(RankService.name));

  constructor(
    private readonly registry: SceneRegistry,
    private readonly store: FeatureStore,
    private readonly engine: ScoringEngine,
    private readonly config: PipelineConfig,
    private readonly featureMetrics: FeaturesMetrics,
  ) {}

  /** `request` has passed validateRankRequest at its edge. */
  async rank(sceneName: string, request: RankRequest): Promise<RankResult> {
    const timeoutMs = request.timeoutMs ?? this.config.RANK_DEFAULT_TIMEOUT_MS;
    const deadline = timeoutMs > 0 ? performance.now() + timeoutMs : undefined;
    const scene = this.registry.get(sceneName);
    const itemIds = request.candidates.map((c) => c.id);
    const fetched = await this.store.fetch(request.user.id, itemIds, {
      requestId: request.requestId,
    });
    const frame: FeatureFrame = {
      user: { ...fetched.user, ...request.user.features, id: request.user.id },
      context: request.context ?? {},
      itemIds,
      itemRequest: request.candidates.map((c) => c.features),
      itemStored: fetched.items,
      onBadValue: (source, row, feature) => {
        this.featureMetrics.badValues.inc({ source, reason: 'wrong_type' });
        const id = source === 'item' ? itemIds[row] : source === 'user' ? request.user.id : '-';
        this.warnings.warn(
          `requestId=${request.requestId ?? '-'}: ${source} ${id} feature ${feature} is not a number; default used`,
        );
      },
    };
    const { scores } = await scoreScene(scene, this.engine, frame, { deadline });
    const topK = Math.min(request.topK ?? scene.spec.postprocess.topK, itemIds.length);
    return {
      scene: scene.spec.scene,
      version: scene.spec.version,
      degraded: fetched.degraded,
      items: topItems(itemIds, scores, topK),
    };
  }
}

/** Indices sorted by score, best first; a NaN score ranks last. */
function topItems(ids: readonly string[], scores: Float32Array, k: number): RankedItem[] {
  const order = Array.from({ length: ids.length }, (_, i) => i);
  const key = (i: number) => (Number.isNaN(scores[i]) ? -Infinity : scores[i]);
  order.sort((a, b) => key(b) - key(a) || a - b);
  const items = new Array<RankedItem>(k);
  for (let r = 0; r < k; r++) items[r] = { id: ids[order[r]], score: scores[order[r]] };
  return items;
}
