import { Injectable, Logger } from '@nestjs/common';
import { countNonFinite, DeadlineExceededError, ThrottledWarnings } from '@app/common';
import { FeaturesConfig, FeatureStore, FetchOptions } from '@app/features';
import { ScoringEngine } from '@app/scoring';
import { PipelineConfig } from '../pipeline.config';
import { PipelineMetrics } from '../pipeline.metrics';
import { SceneRegistry } from '../registry/scene-registry';
import { Scene } from '../scene/scene';
import { scoreScene } from '../scene/scene-scorer';
import { FeatureFrame } from '../transforms/feature-frame';
import { RankRequest, RankResult } from '../request/rank-request';
import { badValueReport } from './bad-value-report';
import { rankedItems } from './ranked-items';

/** The rank path shared by the HTTP app and the Kafka worker. */
@Injectable()
export class RankService {
  private readonly warnings = new ThrottledWarnings(new Logger(RankService.name));

  constructor(
    private readonly registry: SceneRegistry,
    private readonly store: FeatureStore,
    private readonly engine: ScoringEngine,
    private readonly config: PipelineConfig,
    private readonly featuresConfig: FeaturesConfig,
    private readonly metrics: PipelineMetrics,
  ) {}

  /**
   * `request` has passed validateRankRequest at its edge. It runs to the end on the version it
   * started on: the lease keeps that version's models loaded through any swap meanwhile.
   */
  async rank(sceneName: string, request: RankRequest): Promise<RankResult> {
    const lease = this.registry.acquire(sceneName);
    try {
      return await this.rankOn(lease.scene, request);
    } finally {
      lease.release();
    }
  }

  private async rankOn(scene: Scene, request: RankRequest): Promise<RankResult> {
    const timeoutMs = request.timeoutMs ?? this.config.RANK_DEFAULT_TIMEOUT_MS;
    const deadline = timeoutMs > 0 ? performance.now() + timeoutMs : undefined;
    const labels = { scene: scene.spec.scene, version: scene.spec.version };
    const itemIds = request.candidates.map((c) => c.id);
    const fetched = await this.store.fetch(
      request.user.id,
      itemIds,
      this.fetchOptions(request, deadline),
    );
    if (deadline !== undefined && performance.now() >= deadline) {
      throw new DeadlineExceededError(
        `deadline of ${timeoutMs} ms passed while fetching features; nothing was scored`,
      );
    }
    const frame: FeatureFrame = {
      userId: request.user.id,
      userRequest: request.user.features,
      userStored: fetched.user,
      context: request.context,
      itemIds,
      itemRequest: request.candidates.map((c) => c.features),
      itemStored: fetched.items,
      onBadValue: badValueReport(this.metrics, this.warnings, labels, {
        requestId: request.requestId,
        userId: request.user.id,
        itemIds,
      }),
    };
    const { scores } = await scoreScene(scene, this.engine, frame, { deadline });
    const topK = Math.min(request.topK ?? scene.spec.postprocess.topK, itemIds.length);
    const result: RankResult = {
      ...labels,
      degraded: fetched.degraded,
      items: rankedItems(itemIds, scores, topK),
    };
    const nonFinite = countNonFinite(scores);
    if (nonFinite > 0) {
      result.nonFiniteScores = nonFinite;
      this.metrics.nonFiniteScores.inc(labels, nonFinite);
      this.warnings.warn(
        `requestId=${request.requestId ?? '-'}: ${nonFinite} of ${itemIds.length} scores of ${labels.scene}/${labels.version} are not finite; ranked last`,
      );
    }
    return result;
  }

  /**
   * The store waits at most what is left of the request's deadline (never more than its own
   * FEATURES_FETCH_TIMEOUT_MS); without a deadline, the store's default applies.
   */
  private fetchOptions(request: RankRequest, deadline: number | undefined): FetchOptions {
    if (deadline === undefined) return { requestId: request.requestId };
    const remaining = Math.max(1, Math.ceil(deadline - performance.now()));
    return {
      requestId: request.requestId,
      timeoutMs: Math.min(this.featuresConfig.FEATURES_FETCH_TIMEOUT_MS, remaining),
    };
  }
}
