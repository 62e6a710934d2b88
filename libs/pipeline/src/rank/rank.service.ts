import { Injectable } from '@nestjs/common';
import { FeatureStore } from '@app/features';
import { ScoringEngine } from '@app/scoring';
import { PipelineConfig } from '../pipeline.config';
import { SceneRegistry } from '../scene/scene-registry';
import { scoreScene } from '../scene/scene-scorer';
import { FeatureFrame } from '../transforms/feature-frame';
import { checkRankRequest } from './rank-request-check';
import { RankedItem, RankRequest, RankResult } from './rank-request';

/** The rank path shared by the HTTP app and the Kafka worker. */
@Injectable()
export class RankService {
  constructor(
    private readonly registry: SceneRegistry,
    private readonly store: FeatureStore,
    private readonly engine: ScoringEngine,
    private readonly config: PipelineConfig,
  ) {}

  async rank(sceneName: string, request: RankRequest): Promise<RankResult> {
    const timeoutMs = request.timeoutMs ?? this.config.RANK_DEFAULT_TIMEOUT_MS;
    const deadline = timeoutMs > 0 ? performance.now() + timeoutMs : undefined;
    checkRankRequest(request, this.config.RANK_MAX_CANDIDATES);
    const scene = this.registry.get(sceneName);
    const itemIds = request.candidates.map((c) => c.id);
    const [storedUser, itemStored] = await Promise.all([
      this.store.getUser(request.user.id),
      this.store.getItems(itemIds),
    ]);
    const frame: FeatureFrame = {
      user: { ...storedUser, ...request.user.features, id: request.user.id },
      context: request.context ?? {},
      itemIds,
      itemRequest: request.candidates.map((c) => c.features),
      itemStored,
    };
    const { scores } = await scoreScene(scene, this.engine, frame, { deadline });
    const topK = Math.min(request.topK ?? scene.spec.postprocess.topK, itemIds.length);
    return {
      scene: scene.spec.scene,
      version: scene.spec.version,
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
