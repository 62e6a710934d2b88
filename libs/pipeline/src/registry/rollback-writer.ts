import { Logger } from '@nestjs/common';
import { exponentialBackoffMs, RankerError, WakeableSleeps } from '@app/common';
import { RollbackDecision } from '../rollout/canary-guard';
import { RolloutMetrics } from '../rollout/rollout.metrics';
import { TrafficConfig, withoutCanary } from '../rollout/traffic-config';
import { TrafficConflictError } from '../rollout/traffic-errors';

/** What the writer needs of the scene whose canary was rolled back. */
export interface RollbackTarget {
  /** The traffic config in force and its revision; undefined when the scene has none. */
  inForce(): { config: TrafficConfig; revision: number } | undefined;
  /**
   * Stores `config` as the scene's override and applies it; throws TrafficConflictError when the
   * scene has moved past `expectedRevision`, TrafficStoreUnavailableError while the store is down.
   */
  write(
    config: TrafficConfig,
    change: { by: string; reason: string; expectedRevision: number },
  ): Promise<unknown>;
  /** Reads the scene's traffic again (after a conflict: someone else changed it). */
  refresh(): Promise<void>;
}

export interface RollbackWriterOptions {
  /** Tries before giving up; default 20 (about a minute and a half of backoff). */
  attempts?: number;
  /** The wait after a failed try; default exponentialBackoffMs (100 ms doubling, at most 5 s). */
  backoffMs?: (attempt: number) => number;
}

/**
 * Stores a guardrail rollback as the scene's override (`by: guardrail`), so that every replica
 * follows and a restart keeps the canary off. A revision conflict (another change came first) is
 * read again and retried at once, as long as the config in force still names the rolled-back
 * canary; a store that is down is retried after a backoff. A refusal that trying again cannot
 * change (422: the config without the canary names a version that is gone; 404: the scene is
 * gone) ends it. Each try is counted in `ranker_rollout_rollback_writes_total{result}`
 * (`written`, `conflict`, `failed`, `refused`). `close()` ends the backoffs at shutdown: no try
 * starts after it. Never rejects.
 */
export class RollbackWriter {
  private readonly logger = new Logger('SceneTrafficControl');
  private readonly sleeps = new WakeableSleeps();
  private readonly attempts: number;
  private readonly backoffMs: (attempt: number) => number;
  private closed = false;

  constructor(
    private readonly metrics: RolloutMetrics,
    options: RollbackWriterOptions = {},
  ) {
    this.attempts = options.attempts ?? 20;
    this.backoffMs = options.backoffMs ?? exponentialBackoffMs;
  }

  /** Resolves when the rollback is stored, no longer needed, given up, or the writer closed. */
  async write(decision: RollbackDecision, target: RollbackTarget): Promise<void> {
    const { scene } = decision;
    for (let attempt = 0; attempt < this.attempts && !this.closed; attempt++) {
      const inForce = target.inForce();
      if (inForce?.config.canary?.version !== decision.version) return;
      try {
        await target.write(withoutCanary(inForce.config), {
          by: 'guardrail',
          reason: `canary ${decision.version} rolled back: ${decision.reason}`,
          expectedRevision: inForce.revision,
        });
        this.metrics.rollbackWrites.inc({ scene, result: 'written' });
        return;
      } catch (error) {
        const message = (error as Error).message;
        if (refusal(error)) {
          this.metrics.rollbackWrites.inc({ scene, result: 'refused' });
          this.logger.error(
            `scene ${scene}: rollback of canary ${decision.version} refused by the traffic store (${message}); not retried: this replica keeps it off, others follow their own guards`,
          );
          return;
        }
        const conflict = error instanceof TrafficConflictError;
        this.metrics.rollbackWrites.inc({ scene, result: conflict ? 'conflict' : 'failed' });
        this.logger.warn(
          `scene ${scene}: rollback of canary ${decision.version} not stored yet (${message}); retrying`,
        );
        if (!conflict || !(await this.refreshed(scene, target)))
          await this.sleeps.sleep(this.backoffMs(attempt));
      }
    }
    if (this.closed)
      this.logger.warn(
        `scene ${scene}: shutting down before the rollback of canary ${decision.version} was stored; after a restart this replica serves the canary again until a guard rolls it back`,
      );
    else
      this.logger.error(
        `scene ${scene}: rollback of canary ${decision.version} could not be stored; this replica keeps it off, others follow their own guards`,
      );
  }

  /** Reads the scene again after a conflict; false (logged) if that failed. */
  private async refreshed(scene: string, target: RollbackTarget): Promise<boolean> {
    try {
      await target.refresh();
      return true;
    } catch (error) {
      this.logger.warn(`scene ${scene}: traffic not read again: ${(error as Error).message}`);
      return false;
    }
  }

  close(): void {
    this.closed = true;
    this.sleeps.wakeAll();
  }
}

/** A caller's-mistake answer (4xx) other than a conflict: the same write would be refused again. */
const refusal = (error: unknown) =>
  error instanceof RankerError && error.status < 500 && !(error instanceof TrafficConflictError);
