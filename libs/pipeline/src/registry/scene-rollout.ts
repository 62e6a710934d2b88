import { Logger } from '@nestjs/common';
import { describeDetails } from '@app/common';
import { CanaryGuard, GuardSnapshot, RollbackDecision } from '../rollout/canary-guard';
import { ShadowSummary } from '../rollout/shadow.metrics';
import { RolloutMetrics } from '../rollout/rollout.metrics';
import { TrafficConfig, withoutCanary } from '../rollout/traffic-config';
import { TrafficFile } from '../rollout/traffic-file';
import { TrafficPlan } from '../rollout/traffic-plan';
import { TrafficResolution } from '../rollout/traffic-resolution';
import { TrafficOverride } from '../rollout/traffic-store';
import { VersionPolicy } from './scene-listing';

/** What the admin API shows of a scene's rollout. */
export interface SceneTraffic {
  scene: string;
  /** The config in force, its source (override, file, default), revision and problems. */
  traffic: TrafficResolution;
  /** The override set, with who set it, when and why; absent when traffic.yaml or the default rules. */
  override?: TrafficOverride;
  /** traffic.yaml beside the version folders; absent when the scene has none. */
  file?: { path: string; digest: string };
  /** The canary's guard, or the last one that rolled a canary back. */
  guard?: GuardSnapshot;
  shadows: ShadowSummary[];
}

/**
 * One scene's rollout on this replica: the traffic resolution in force, the plan that chooses
 * versions from it, the canary's guard, and a canary this replica's guard rolled back, kept off
 * until the traffic moves past the revision it was decided at. SceneTrafficControl reads the
 * sources (traffic.yaml, the override) and hands each new resolution to `take`.
 */
export class SceneRollout {
  resolution?: TrafficResolution;
  /** The override `resolution` was resolved from (as read then); absent when none was set. */
  override?: TrafficOverride;
  plan?: TrafficPlan;
  file?: TrafficFile;
  guard?: CanaryGuard;
  /** The VersionPolicy last asked of the registry, as JSON. */
  private policyKey = '{}';
  /** Traffic work on the scene runs one at a time. */
  tail: Promise<void> = Promise.resolve();
  /**
   * Whether a refresh has put the scene's traffic in force (or failed trying) since the scene last
   * had no version to serve: until then a scene that appeared after boot is not served
   * (SceneTrafficControl.choose), or its newest version would answer before a pinned stable.
   */
  applied = false;
  private guardKey?: string;
  /** A canary this replica's guard rolled back, not chosen while the traffic is still at `revision`. */
  private suppressed?: { version: string; revision: number };

  constructor(
    readonly scene: string,
    private readonly metrics: RolloutMetrics,
    /** Called on the request path once the canary is off here: stores the rollback. */
    private readonly onRollback: (decision: RollbackDecision) => void,
  ) {}

  /**
   * The plan `resolution` needs: none when the default rules (the registry's newest valid version
   * serves, nothing pinned), the plan in force when the config did not change, else a new one.
   */
  planFor(resolution: TrafficResolution): TrafficPlan | undefined {
    if (resolution.source === 'default') return undefined;
    return this.plan && sameConfig(this.resolution?.config, resolution.config) && !this.suppressed
      ? this.plan
      : new TrafficPlan(resolution.config);
  }

  /**
   * The VersionPolicy to ask of the registry for `plan` (from planFor): its stable pinned and its
   * versions kept loaded, nothing pinned without a plan (the registry's newest valid version
   * serves); undefined when it is the one asked last.
   */
  policyChange(
    resolution: TrafficResolution,
    plan: TrafficPlan | undefined,
  ): VersionPolicy | undefined {
    const policy: VersionPolicy = plan
      ? { stable: resolution.config.stable, keep: [...plan.versions()].sort() }
      : {};
    const key = JSON.stringify(policy);
    if (key === this.policyKey) return undefined;
    this.policyKey = key;
    return policy;
  }

  /**
   * Puts `resolution` and its plan (planFor) in force, without a canary rolled back here;
   * `override` is the override it was resolved from, shown with it until the next one.
   */
  take(
    resolution: TrafficResolution,
    plan: TrafficPlan | undefined,
    override: TrafficOverride | undefined,
  ): void {
    if (this.suppressed && this.suppressed.revision !== resolution.revision)
      this.suppressed = undefined;
    this.resolution = resolution;
    this.override = override;
    this.plan =
      plan && this.suppressed?.version === resolution.config.canary?.version
        ? new TrafficPlan(withoutCanary(resolution.config))
        : plan;
    this.watchCanary(resolution.config);
  }

  /** What the admin API shows, with the scene's `shadows`; undefined before a first resolution. */
  view(shadows: ShadowSummary[]): SceneTraffic | undefined {
    if (!this.resolution) return undefined;
    // The override the traffic in force came from: the store may already hold a newer one that
    // this replica has not applied yet (its versions still loading), and the two must agree.
    const { override, file, guard } = this;
    return {
      scene: this.scene,
      traffic: this.resolution,
      ...(override && { override }),
      ...(file && { file: { path: file.path, digest: file.digest } }),
      ...(guard && { guard: guard.snapshot() }),
      shadows,
    };
  }

  /** Stops the guard's metrics (the scene is gone, or the app stops). */
  close(): void {
    if (this.guard) this.metrics.unwatch(this.guard);
  }

  /** A new guard for a new canary; the last one stays visible once it has rolled back. */
  private watchCanary(config: TrafficConfig): void {
    const canary = this.suppressed ? undefined : config.canary;
    const key = canary && JSON.stringify([config.stable, canary]);
    if (key === this.guardKey) return;
    if (!canary && this.guard?.state === 'rolled_back') {
      this.guardKey = undefined;
      return;
    }
    if (this.guard) this.metrics.unwatch(this.guard);
    this.guardKey = key;
    this.guard = undefined;
    if (!canary) return;
    this.guard = new CanaryGuard({
      scene: this.scene,
      stableVersion: config.stable,
      canary,
      metrics: this.metrics,
      onRollback: (decision) => this.rolledBack(decision),
    });
    this.metrics.watch(this.guard);
  }

  /** Runs on the request path: stops the canary here at once, then has the rollback stored. */
  private rolledBack(decision: RollbackDecision): void {
    const resolution = this.resolution!;
    this.suppressed = { version: decision.version, revision: resolution.revision };
    this.plan = new TrafficPlan(withoutCanary(resolution.config));
    this.onRollback(decision);
  }
}

export const sameConfig = (a: TrafficConfig | undefined, b: TrafficConfig) =>
  a !== undefined && JSON.stringify(a) === JSON.stringify(b);

/** Logs what changed between two resolutions of a scene's traffic: new problems, a new config. */
export function reportTraffic(
  logger: Logger,
  scene: string,
  before: TrafficResolution | undefined,
  after: TrafficResolution,
): void {
  const problems = JSON.stringify(after.problems);
  if (problems !== JSON.stringify(before?.problems ?? []) && after.problems.length > 0)
    for (const { source, errors } of after.problems)
      logger.error(`scene ${scene}: traffic ${source} refused: ${describeDetails(errors)}`);
  if (!before || !sameConfig(before.config, after.config) || before.source !== after.source)
    logger.log(
      `scene ${scene}: traffic from ${after.source} (revision ${after.revision})${after.kept ? ', kept from before' : ''}: ${JSON.stringify(after.config)}`,
    );
}
