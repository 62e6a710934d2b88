import { Logger } from '@nestjs/common';
import { CanaryConfig, GuardrailConfig } from './traffic-config';
import { OutcomeWindow, WindowStats } from './outcome-window';
import type { RolloutMetrics } from './rollout.metrics';

/** `collecting`: too few outcomes to judge; `healthy`: judged and within limits. */
export type GuardState = 'collecting' | 'healthy' | 'rolled_back';
export const GUARD_STATES: readonly GuardState[] = ['collecting', 'healthy', 'rolled_back'];

/** The guardrail limit a canary crossed. */
export type GuardLimit = 'maxErrorRateDelta' | 'maxErrorRatio' | 'maxP99Ratio';

/** The guard's verdict that the canary must go: logged, counted, and handed to `onRollback`. */
export interface RollbackDecision {
  scene: string;
  /** The canary version rolled back. */
  version: string;
  stableVersion: string;
  limit: GuardLimit;
  /** A sentence naming the figures, e.g. `error rate 8.00% vs stable 1.00% (delta 7.00% > 2.00%)`. */
  reason: string;
  canary: WindowStats;
  stable: WindowStats;
  /** ISO time of the decision. */
  at: string;
}

/** What the admin API shows of a guard. */
export interface GuardSnapshot {
  scene: string;
  version: string;
  stableVersion: string;
  state: GuardState;
  guardrail: GuardrailConfig;
  canary: WindowStats;
  stable: WindowStats;
  /** Present once rolled back. */
  rollback?: RollbackDecision;
}

export interface CanaryGuardOptions {
  scene: string;
  stableVersion: string;
  canary: CanaryConfig;
  /** Monotonic milliseconds; default `performance.now`. */
  now?: () => number;
  metrics?: RolloutMetrics;
  /**
   * Called once, with the decision, when the canary crosses a limit; runs on the request path,
   * so it should only start the work: stop choosing the canary on this replica at once (the
   * guard's state says `rolled_back`), and write `withoutCanary(config)` to the TrafficStore,
   * retrying while Redis is down, so every replica follows and a restart keeps it. A throw is
   * logged, never passed to the caller.
   */
  onRollback?: (decision: RollbackDecision) => void;
}

/**
 * Watches one canary against stable over its guardrail's sliding window and decides, once,
 * when the canary must be rolled back. Nothing is decided until both arms have `minRequests`
 * outcomes in the window; the error-rate limits also wait for `minErrors` canary errors. Then
 * any limit crossed (strictly) rolls the canary back: the decision is logged, counted in
 * `ranker_rollout_rollbacks_total`, kept for the admin API and passed to `onRollback`, whose
 * job is to take the canary out of the traffic config (TrafficStore, `withoutCanary`). After
 * that the guard ignores further outcomes. One guard per canary: a new canary gets a new guard.
 */
export class CanaryGuard {
  private readonly logger = new Logger(CanaryGuard.name);
  private readonly canaryWindow: OutcomeWindow;
  private readonly stableWindow: OutcomeWindow;
  private readonly guardrail: GuardrailConfig;
  private current: GuardState = 'collecting';
  private decision?: RollbackDecision;

  constructor(private readonly options: CanaryGuardOptions) {
    const now = options.now ?? (() => performance.now());
    this.guardrail = options.canary.guardrail;
    this.canaryWindow = new OutcomeWindow(this.guardrail.window * 1000, now);
    this.stableWindow = new OutcomeWindow(this.guardrail.window * 1000, now);
  }

  get scene(): string {
    return this.options.scene;
  }

  get version(): string {
    return this.options.canary.version;
  }

  get state(): GuardState {
    return this.current;
  }

  /**
   * Records one served request of the canary or of stable (other arms are not the guard's
   * business) and judges the canary. `ok` is false only for the service's own failures (a 5xx:
   * a model that failed, a deadline missed); a caller's mistake (4xx) is no outcome of a
   * version and should not be recorded. Returns the decision when this outcome caused it.
   */
  record(arm: 'canary' | 'stable', ok: boolean, latencyMs: number): RollbackDecision | undefined {
    if (this.current === 'rolled_back') return undefined;
    (arm === 'canary' ? this.canaryWindow : this.stableWindow).record(ok, latencyMs);
    return this.evaluate();
  }

  /** Judges the canary now (the window also slides with time alone). */
  evaluate(): RollbackDecision | undefined {
    if (this.current === 'rolled_back') return undefined;
    const crossed = this.crossedLimit();
    if (crossed === undefined) return undefined;
    const decision: RollbackDecision = {
      scene: this.options.scene,
      version: this.options.canary.version,
      stableVersion: this.options.stableVersion,
      limit: crossed.limit,
      reason: crossed.reason,
      canary: this.canaryWindow.stats(),
      stable: this.stableWindow.stats(),
      at: new Date().toISOString(),
    };
    this.current = 'rolled_back';
    this.decision = decision;
    this.logger.warn(
      `canary ${decision.scene}/${decision.version} rolled back to ${decision.stableVersion}: ${decision.reason}`,
    );
    this.options.metrics?.rollbacks.inc({
      scene: decision.scene,
      version: decision.version,
      limit: decision.limit,
    });
    try {
      this.options.onRollback?.(decision);
    } catch (error) {
      // The outcome being recorded belongs to a caller's request: it must never fail for this.
      this.logger.error(
        `rollback of ${decision.scene}/${decision.version}: ${(error as Error).stack}`,
      );
    }
    return decision;
  }

  snapshot(): GuardSnapshot {
    this.evaluate();
    const snapshot: GuardSnapshot = {
      scene: this.options.scene,
      version: this.options.canary.version,
      stableVersion: this.options.stableVersion,
      state: this.current,
      guardrail: this.guardrail,
      canary: this.canaryWindow.stats(),
      stable: this.stableWindow.stats(),
    };
    if (this.decision) snapshot.rollback = this.decision;
    return snapshot;
  }

  /** The first limit crossed, with its reason; updates the state while judging. */
  private crossedLimit(): { limit: GuardLimit; reason: string } | undefined {
    const g = this.guardrail;
    const canary = this.canaryWindow.counts();
    const stable = this.stableWindow.counts();
    if (canary.requests < g.minRequests || stable.requests < g.minRequests) {
      this.current = 'collecting';
      return undefined;
    }
    this.current = 'healthy';
    const canaryRate = canary.errors / canary.requests;
    const stableRate = stable.errors / stable.requests;
    const rates = `error rate ${pct(canaryRate)} vs stable ${pct(stableRate)}`;
    if (canary.errors >= g.minErrors) {
      if (g.maxErrorRateDelta !== undefined && canaryRate - stableRate > g.maxErrorRateDelta) {
        const delta = `delta ${pct(canaryRate - stableRate)} > ${pct(g.maxErrorRateDelta)}`;
        return { limit: 'maxErrorRateDelta', reason: `${rates} (${delta})` };
      }
      if (g.maxErrorRatio !== undefined && canaryRate > g.maxErrorRatio * stableRate) {
        const ratio =
          stableRate > 0 ? `${(canaryRate / stableRate).toFixed(2)}x` : 'stable had none';
        return { limit: 'maxErrorRatio', reason: `${rates} (${ratio}, limit ${g.maxErrorRatio}x)` };
      }
    }
    if (g.maxP99Ratio !== undefined) {
      const [canaryP99, stableP99] = [this.canaryWindow.p99Ms(), this.stableWindow.p99Ms()];
      if (
        canaryP99 !== undefined &&
        stableP99 !== undefined &&
        canaryP99 > g.maxP99Ratio * stableP99
      ) {
        return {
          limit: 'maxP99Ratio',
          reason: `p99 ${ms(canaryP99)} vs stable ${ms(stableP99)} (${(canaryP99 / stableP99).toFixed(2)}x, limit ${g.maxP99Ratio}x)`,
        };
      }
    }
    return undefined;
  }
}

const pct = (rate: number) => `${(rate * 100).toFixed(2)}%`;
const ms = (value: number) => `${value.toFixed(1)} ms`;
