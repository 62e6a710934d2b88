import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import {
  rejectAfter,
  SceneNotFoundError,
  SceneNotReadyError,
  ThrottledWarnings,
} from '@app/common';
import { join, resolve } from 'node:path';
import { PipelineConfig } from '../pipeline.config';
import { RollbackDecision } from '../rollout/canary-guard';
import { RolloutMetrics } from '../rollout/rollout.metrics';
import { ShadowMetrics } from '../rollout/shadow.metrics';
import { withoutCanary } from '../rollout/traffic-config';
import { TrafficInvalidError } from '../rollout/traffic-errors';
import { loadTrafficFile } from '../rollout/traffic-file';
import { TrafficChoice } from '../rollout/traffic-plan';
import { resolveTraffic } from '../rollout/traffic-resolution';
import { TrafficStore } from '../rollout/traffic-store';
import { RollbackWriter } from './rollback-writer';
import { SceneRegistry } from './scene-registry';
import { nameableVersions, newestValidVersion } from './scene-listing';
import { reportTraffic, SceneRollout, SceneTraffic } from './scene-rollout';

/**
 * How long a scene's refresh waits for the traffic store (a Redis that may accept connections and
 * not answer) before it goes on with the override it read last: the boot's readiness waits for
 * the refreshes (see `bootTrafficApplied`), and a scan's must not hang either.
 */
export const TRAFFIC_STORE_READ_TIMEOUT_MS = 2000;

export interface TrafficChangeOptions {
  by: string;
  reason?: string;
  expectedRevision?: number;
}

/**
 * The rollout of every scene, wired to the scene registry: after each scan it reads the scene's
 * traffic.yaml and its run-time override (TrafficStore) again, resolves the config in force
 * (resolveTraffic), turns it into a TrafficPlan and asks the registry to pin its stable version
 * and keep the others (canary, arms, shadow) loaded. The rank path asks it which version serves a
 * user and reports each canary and stable outcome to the canary's guard (SceneRollout). A
 * rollback stops the canary on this replica at once and is stored as an override
 * (`by: guardrail`, RollbackWriter), which reaches the other replicas through the registry's
 * notices and their polls.
 */
@Injectable()
export class SceneTrafficControl implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(SceneTrafficControl.name);
  private readonly warnings = new ThrottledWarnings(this.logger);
  private readonly scenes = new Map<string, SceneRollout>();
  private readonly rollbacks: RollbackWriter;
  private readonly root: string;
  private unsubscribe: (() => void) | undefined;
  private closed = false;
  private bootApplied = false;
  private bootApplying: Promise<void> = Promise.resolve();

  constructor(
    private readonly registry: SceneRegistry,
    @Inject(TrafficStore) private readonly store: TrafficStore,
    private readonly metrics: RolloutMetrics,
    private readonly shadowMetrics: ShadowMetrics,
    config: PipelineConfig,
  ) {
    this.root = resolve(config.BUNDLES_DIR);
    this.rollbacks = new RollbackWriter(metrics);
  }

  onApplicationBootstrap(): void {
    this.unsubscribe = this.registry.onScanned((names, origins) => {
      // A scan the rollout itself asked for (setPolicy) brings nothing new to read.
      if (origins.size === 1 && origins.has('policy')) return;
      for (const name of names) void this.refresh(name);
    });
    // A scene's traffic is read after the scan that found it; until it is applied the registry's
    // own rule serves (the newest valid version), which at boot must reach no caller: a
    // traffic.yaml pinning an older stable (a rollback) would be ignored by a replica's first
    // requests after every restart. So the boot waits for the registry's first scan, then for
    // each scene's traffic applied (the versions it pins loaded and swapped in); readiness and
    // the Kafka worker's first fetch wait for this (see `bootTrafficApplied`).
    // One macrotask first: the registry's own bootstrap hook (same module) has started its boot
    // scan by then, whatever order Nest calls the two hooks in. That scan's listener call above
    // has queued each scene's refresh by the time it is over: the boot waits for those (a scene's
    // tail), and refreshes only a scene no listener call reached.
    this.bootApplying = new Promise((next) => setImmediate(next))
      .then(() => this.registry.whenLoaded())
      .then(() =>
        Promise.allSettled(
          this.registry
            .list()
            .map(({ scene }) => this.scenes.get(scene)?.tail ?? this.refresh(scene)),
        ),
      )
      .then(() => {
        this.bootApplied = true;
      });
  }

  /** Whether the traffic of every scene the boot found has been applied once. */
  get bootTrafficApplied(): boolean {
    return this.bootApplied;
  }

  /** Resolves once `bootTrafficApplied` (never rejects). */
  whenApplied(): Promise<void> {
    return this.bootApplying;
  }

  onApplicationShutdown(): void {
    this.closed = true;
    this.rollbacks.close();
    this.unsubscribe?.();
    for (const state of this.scenes.values()) state.close();
  }

  /**
   * The version that serves `userId` and its arm; undefined when no plan is in force (the
   * registry's newest valid version serves). Throws SceneNotReadyError (503, retried by the Kafka
   * worker) for a scene that has found a version to serve since boot and not yet applied its
   * traffic: a scene dropped in with `traffic.yaml` pinning an older stable must not answer from
   * its newest version first. At boot readiness holds callers off instead (`bootTrafficApplied`).
   */
  choose(scene: string, userId: string): TrafficChoice | undefined {
    const state = this.scenes.get(scene);
    if (state?.applied !== true && this.bootApplied && this.registry.stableVersion(scene))
      throw new SceneNotReadyError(`scene '${scene}' is applying its traffic config`);
    return state?.plan?.choose(userId);
  }

  /** One served request of the canary or stable arm, for the canary's guard. */
  record(scene: string, arm: string, ok: boolean, latencyMs: number): void {
    if (arm !== 'canary' && arm !== 'stable') return;
    this.scenes.get(scene)?.guard?.record(arm, ok, latencyMs);
  }

  /** Counts a request whose chosen version could not serve (stable served it). */
  fellBack(scene: string, choice: TrafficChoice): void {
    this.metrics.fallbacks.inc({ scene, version: choice.version, arm: choice.arm });
  }

  describe(scene: string): SceneTraffic | undefined {
    return this.scenes.get(scene)?.view(this.shadowMetrics.summaries(scene));
  }

  /**
   * Validates `raw` against the scene's versions and stores it as the scene's override; applied
   * here before this resolves, and announced to the other replicas. Throws TrafficInvalidError
   * (422), TrafficConflictError (409), TrafficStoreUnavailableError (503), SceneNotFoundError.
   */
  async set(scene: string, raw: unknown, options: TrafficChangeOptions): Promise<SceneTraffic> {
    const versions = nameableVersions(this.listing(scene));
    const file = await loadTrafficFile(join(this.root, scene), versions);
    await this.store.set(scene, raw, {
      versions,
      by: options.by,
      ...(options.reason !== undefined && { reason: options.reason }),
      ...(options.expectedRevision !== undefined && { expectedRevision: options.expectedRevision }),
      ...(file && { fileDigest: file.digest }),
    });
    return this.applied(scene);
  }

  /** Removes the scene's override: traffic.yaml (or the default) is in force again. */
  async clear(scene: string, expectedRevision?: number): Promise<SceneTraffic> {
    this.listing(scene);
    await this.store.clear(scene, expectedRevision === undefined ? {} : { expectedRevision });
    return this.applied(scene);
  }

  /** Stores the config in force without its canary as an override. */
  async rollback(scene: string, options: TrafficChangeOptions): Promise<SceneTraffic> {
    this.listing(scene);
    await this.refresh(scene);
    const resolution = this.scenes.get(scene)?.resolution;
    if (!resolution?.config.canary)
      throw new TrafficInvalidError(`of scene '${scene}'`, [
        { path: 'canary', message: 'the traffic in force has no canary to roll back' },
      ]);
    return this.set(scene, withoutCanary(resolution.config), {
      expectedRevision: resolution.revision,
      ...options,
    });
  }

  /** Reads the scene's traffic again and applies it (one refresh of a scene at a time). */
  refresh(scene: string): Promise<void> {
    const state = this.stateOf(scene);
    const run = state.tail.then(() => this.apply(scene, state));
    state.tail = run.catch((error: Error) => {
      // The registry's own rule serves then (as at boot): logged, never a scene held unserved.
      state.applied = true;
      this.logger.error(`scene ${scene}: traffic not applied: ${error.stack}`);
    });
    return run;
  }

  private async applied(scene: string): Promise<SceneTraffic> {
    await this.refresh(scene);
    this.registry.announce(scene);
    return this.describe(scene)!;
  }

  private async apply(scene: string, state: SceneRollout): Promise<void> {
    if (this.closed) return;
    const listing = this.registry.describe(scene);
    if (!listing) {
      state.close();
      this.scenes.delete(scene);
      return;
    }
    const versions = nameableVersions(listing);
    const newest = newestValidVersion(listing);
    if (newest === null) {
      // Nothing can serve: the traffic of the version that comes next is applied before it serves.
      state.applied = false;
      return;
    }
    const file = await loadTrafficFile(join(this.root, scene), versions);
    try {
      await rejectAfter(this.store.reload(scene), TRAFFIC_STORE_READ_TIMEOUT_MS);
    } catch (error) {
      this.warnings.warn(
        `scene ${scene}: traffic override not read (${(error as Error).message}); the last one read stays in force`,
      );
    }
    const override = this.store.current(scene);
    const resolution = resolveTraffic({
      versions,
      newest,
      ...(file && { file }),
      ...(override && { override }),
      ...(state.resolution && { previous: state.resolution }),
    });
    reportTraffic(this.logger, scene, state.resolution, resolution);
    state.file = file;
    // Without traffic.yaml or an override the registry's own rule serves (the newest valid
    // version, swapped as soon as it is loaded): no plan, nothing pinned.
    const plan = state.planFor(resolution);
    const policy = state.policyChange(resolution, plan);
    // The new versions load before the plan may choose them; the old plan serves meanwhile.
    if (policy) await this.registry.setPolicy(scene, policy);
    state.take(resolution, plan, override?.override);
    state.applied = true;
  }

  /** Stores a rollback this replica's guard decided (the canary is already off here). */
  private storeRollback(decision: RollbackDecision): void {
    const { scene } = decision;
    void this.rollbacks.write(decision, {
      inForce: () => this.scenes.get(scene)?.resolution,
      write: (config, change) => this.set(scene, config, change),
      refresh: () => this.refresh(scene),
    });
  }

  private listing(scene: string) {
    const listing = this.registry.describe(scene);
    if (!listing) throw new SceneNotFoundError(scene);
    return listing;
  }

  private stateOf(scene: string): SceneRollout {
    let state = this.scenes.get(scene);
    if (!state) {
      state = new SceneRollout(scene, this.metrics, (decision) => this.storeRollback(decision));
      this.scenes.set(scene, state);
    }
    return state;
  }
}
