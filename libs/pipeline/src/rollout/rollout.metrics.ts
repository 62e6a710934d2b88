import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Registry } from 'prom-client';
import type { CanaryGuard } from './canary-guard';
import { GUARD_STATES } from './canary-guard';
import type { WindowStats } from './outcome-window';

const CANARY = ['scene', 'version'] as const;
const ARM = [...CANARY, 'arm'] as const;

/**
 * Metrics of canary guardrails, per scene and canary `version`. The gauges are read from the
 * watched guards when Prometheus scrapes, so recording an outcome costs no metric update.
 */
@Injectable()
export class RolloutMetrics {
  readonly rollbacks: Counter<(typeof CANARY)[number] | 'limit'>;
  /** Requests the plan gave a version that could not serve, served by stable instead. */
  readonly fallbacks: Counter<'scene' | 'version' | 'arm'>;
  /** Tries to write a rollback override to the TrafficStore, per result (written, conflict, failed, refused). */
  readonly rollbackWrites: Counter<'scene' | 'result'>;
  private readonly guards = new Set<CanaryGuard>();

  constructor(registry: Registry) {
    const registers = [registry];
    this.rollbacks = new Counter({
      name: 'ranker_rollout_rollbacks_total',
      help: 'Canaries rolled back by their guardrail, per crossed limit (maxErrorRateDelta, maxErrorRatio, maxP99Ratio)',
      labelNames: [...CANARY, 'limit'],
      registers,
    });
    this.fallbacks = new Counter({
      name: 'ranker_rollout_fallbacks_total',
      help: 'Requests whose chosen version (canary, arm or pinned stable) was not loaded or not valid, served by the stable version instead',
      labelNames: ['scene', 'version', 'arm'],
      registers,
    });
    this.rollbackWrites = new Counter({
      name: 'ranker_rollout_rollback_writes_total',
      help: 'Attempts to store a guardrail rollback as a traffic override, per result (written, conflict, failed, refused)',
      labelNames: ['scene', 'result'],
      registers,
    });
    const guards = this.guards;
    const gauge = (
      name: string,
      help: string,
      labelNames: readonly string[],
      set: (g: Gauge) => void,
    ) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers,
        collect() {
          this.reset();
          set(this);
        },
      });
    gauge(
      'ranker_rollout_guard_state',
      'State of each watched canary guard: 1 for its current state (collecting, healthy, rolled_back), 0 for the others',
      [...CANARY, 'state'],
      (g) => {
        for (const guard of guards) {
          const { scene, version, state } = guard.snapshot();
          for (const each of GUARD_STATES)
            g.set({ scene, version, state: each }, each === state ? 1 : 0);
        }
      },
    );
    const perArm = (
      name: string,
      help: string,
      value: (stats: WindowStats) => number | undefined,
    ) =>
      gauge(name, help, ARM, (g) => {
        for (const guard of guards) {
          const snapshot = guard.snapshot();
          for (const arm of ['canary', 'stable'] as const) {
            const v = value(snapshot[arm]);
            if (v !== undefined)
              g.set({ scene: snapshot.scene, version: snapshot.version, arm }, v);
          }
        }
      });
    perArm(
      'ranker_rollout_window_requests',
      'Outcomes in the guardrail window, canary and stable arm',
      (s) => s.requests,
    );
    perArm(
      'ranker_rollout_window_error_rate',
      'Error rate (0-1) in the guardrail window, canary and stable arm',
      (s) => s.errorRate,
    );
    perArm(
      'ranker_rollout_window_p99_ms',
      'p99 latency (ms, within 5%) in the guardrail window, canary and stable arm',
      (s) => s.p99Ms,
    );
  }

  /** Shows `guard` in the gauges until `unwatch`: call when a canary starts and when it ends. */
  watch(guard: CanaryGuard): void {
    this.guards.add(guard);
  }

  unwatch(guard: CanaryGuard): void {
    this.guards.delete(guard);
  }
}
