import { Injectable, Logger } from '@nestjs/common';
import { countNonFinite, DeadlineExceededError, LoopSlicer, ThrottledWarnings } from '@app/common';
import {
  FeatureFetch,
  FeatureRow,
  FeaturesConfig,
  FeatureStore,
  FetchOptions,
} from '@app/features';
import { ScoringEngine } from '@app/scoring';
import { PipelineConfig } from '../pipeline.config';
import { PipelineMetrics } from '../pipeline.metrics';
import { SceneLease } from '../registry/scene-listing';
import { SceneRegistry } from '../registry/scene-registry';
import { SceneTrafficControl } from '../registry/scene-traffic';
import type { TrafficChoice } from '../rollout/traffic-plan';
import { Scene } from '../scene/scene';
import { checkFits, scoreScene } from '../scene/scene-scorer';
import { featureFrame, NO_ITEM_FEATURES } from '../transforms/feature-frame';
import { RankRequest, RankResult } from '../request/rank-request';
import { badValueReport } from './bad-value-report';
import { countsAgainstVersion } from './guard-outcome';
import { rankedItems } from './ranked-items';
import { ShadowRunner } from './shadow-runner';

/** A shadow run of a request without a deadline stops after this long. */
const SHADOW_DEFAULT_TIMEOUT_MS = 5000;

type RankStage = 'start' | 'fetched' | 'scored';

export interface RankOptions {
  /**
   * Whether the request's steps pass the loop slicer (RANK_LOOP_SLICE_MS); default true. The
   * Kafka worker's requests do not: its admission gate counts on an admitted message's rows
   * reaching the engine's queue within the loop turn that admitted it.
   */
  sliced?: boolean;
}

/** The rank path shared by the HTTP app and the Kafka worker. */
@Injectable()
export class RankService {
  private readonly warnings = new ThrottledWarnings(new Logger(RankService.name));
  private readonly slicer: LoopSlicer;

  constructor(
    private readonly registry: SceneRegistry,
    private readonly store: FeatureStore,
    private readonly engine: ScoringEngine,
    private readonly config: PipelineConfig,
    private readonly featuresConfig: FeaturesConfig,
    private readonly metrics: PipelineMetrics,
    private readonly traffic: SceneTrafficControl,
    private readonly shadows: ShadowRunner,
  ) {
    this.slicer = new LoopSlicer(config.RANK_LOOP_SLICE_MS);
  }

  /**
   * `request` has passed validateRankRequest at its edge. The scene's traffic plan picks the
   * version and arm for its user (stable when the chosen version cannot serve, counted). It runs
   * to the end on that version: the lease keeps its models loaded through any swap meanwhile.
   * Canary and stable outcomes go to the canary's guard: every answer with its latency, a
   * failure as an error when it is the version's (countsAgainstVersion), a caller's mistake not.
   */
  async rank(
    sceneName: string,
    request: RankRequest,
    options: RankOptions = {},
  ): Promise<RankResult> {
    const choice = this.traffic.choose(sceneName, request.user.id);
    const { lease, arm } = this.lease(sceneName, choice);
    const started = performance.now();
    try {
      const result = await this.rankOn(lease.scene, arm, request, choice, options.sliced ?? true);
      this.traffic.record(sceneName, arm, true, performance.now() - started);
      return result;
    } catch (error) {
      if (countsAgainstVersion(error))
        this.traffic.record(sceneName, arm, false, performance.now() - started);
      throw error;
    } finally {
      lease.release();
    }
  }

  private lease(
    scene: string,
    choice: TrafficChoice | undefined,
  ): { lease: SceneLease; arm: string } {
    if (choice) {
      try {
        return { lease: this.registry.acquire(scene, choice.version), arm: choice.arm };
      } catch {
        this.traffic.fellBack(scene, choice);
      }
    }
    return { lease: this.registry.acquire(scene), arm: 'stable' };
  }

  private async rankOn(
    scene: Scene,
    arm: string,
    request: RankRequest,
    choice: TrafficChoice | undefined,
    sliced: boolean,
  ): Promise<RankResult> {
    const timeoutMs = request.timeoutMs ?? this.config.RANK_DEFAULT_TIMEOUT_MS;
    const deadline = timeoutMs > 0 ? performance.now() + timeoutMs : undefined;
    const labels = { scene: scene.spec.scene, version: scene.spec.version };
    // Each step that may follow many others ready at once (a burst of requests, one Redis reply
    // or one worker message for many) passes the loop slicer first: the loop keeps turning.
    if (sliced) await this.turn('start');
    const { itemIds, itemRequest } = candidateColumns(request.candidates);
    // Before the fetch: a request no model queue can take never costs a round trip.
    try {
      checkFits(scene, itemIds.length);
    } catch (error) {
      this.metrics.tooLarge.inc(labels);
      throw error;
    }
    // Under overload, a request the models' queues cannot take now is refused here, for the price
    // of this check, not of a feature fetch and a tensor build first (scoreScene checks again,
    // for all models at once, as it queues the rows).
    for (const model of scene.models) this.engine.admit(model.id, itemIds.length);
    const fetched = await this.store.fetch(
      request.user.id,
      itemIds,
      this.fetchOptions(request, deadline),
    );
    if (sliced) await this.turn('fetched');
    if (deadline !== undefined && performance.now() >= deadline) {
      throw new DeadlineExceededError(
        `deadline of ${timeoutMs} ms passed while fetching features; nothing was scored`,
      );
    }
    const frame = featureFrame({
      userId: request.user.id,
      userRequest: request.user.features,
      userStored: fetched.user,
      context: request.context,
      itemIds,
      itemRequest,
      itemStored: fetched.items,
      itemHolders: fetched.itemHolders,
      itemMemos: fetched.itemMemos,
      onBadValue: badValueReport(this.metrics, this.warnings, labels, {
        requestId: request.requestId,
        userId: request.user.id,
        itemIds,
      }),
    });
    const { scores } = await scoreScene(scene, this.engine, frame, { deadline });
    if (sliced) await this.turn('scored');
    const topK = Math.min(request.topK ?? scene.spec.postprocess.topK, itemIds.length);
    const result: RankResult = {
      ...labels,
      arm,
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
    if (choice?.shadow && choice.shadow.version !== labels.version)
      void this.shadows.start({
        scene: labels.scene,
        primary: labels.version,
        shadow: choice.shadow,
        frame,
        scores,
        returned: result.items.length,
        deadline: performance.now() + (timeoutMs > 0 ? timeoutMs : SHADOW_DEFAULT_TIMEOUT_MS),
      });
    else dropRowLists(itemIds, fetched);
    return result;
  }

  /** Resolves at once within the loop turn's slice; else in a later turn (counted). */
  private turn(stage: RankStage): Promise<void> | undefined {
    const wait = this.slicer.pass();
    if (wait === undefined) return undefined;
    this.metrics.loopYields.inc({ stage });
    return wait;
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

/**
 * Empties a finished request's per-row lists (its ids, the fetch's rows and holders): the answer
 * holds what it needs of them, and nothing else reads them once the request is over (a shadow run
 * reads them later: then they are kept). Measured, not tidiness: lists of a request that has
 * answered were still found alive by the next scavenges, the young id strings with them, and
 * promoted (~150 kB a 3,000-candidate request); emptied, a scavenge finds only the requests in
 * flight, and with tuneGarbageCollector's flags GC took ~0.6 ms of CPU per such request instead
 * of 2.1-2.3 (test/bench/RESULTS.md: bench:rank, 2026-12-04 evening).
 */
function dropRowLists(itemIds: string[], fetched: FeatureFetch): void {
  itemIds.length = 0;
  fetched.items.length = 0;
  if (fetched.itemHolders !== undefined) fetched.itemHolders.length = 0;
}

/**
 * The candidates' ids, and their request features by row: an array only when some candidate sent
 * features (most requests send none, and a 3,000-row array of undefined is garbage made for
 * nothing).
 */
function candidateColumns(candidates: RankRequest['candidates']): {
  itemIds: string[];
  itemRequest: readonly (FeatureRow | undefined)[];
} {
  const n = candidates.length;
  const itemIds = new Array<string>(n);
  let itemRequest: (FeatureRow | undefined)[] | undefined;
  for (let i = 0; i < n; i++) {
    const { id, features } = candidates[i];
    itemIds[i] = id;
    if (features !== undefined)
      (itemRequest ??= new Array<FeatureRow | undefined>(n))[i] = features;
  }
  return { itemIds, itemRequest: itemRequest ?? NO_ITEM_FEATURES };
}
