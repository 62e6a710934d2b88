import { Injectable, Logger } from '@nestjs/common';
import { DeadlineExceededError, ThrottledWarnings } from '@app/common';
import { ScoringEngine } from '@app/scoring';
import { PipelineConfig } from '../pipeline.config';
import { SceneRegistry } from '../registry/scene-registry';
import { compareShadow } from '../rollout/shadow-comparison';
import { ShadowMetrics } from '../rollout/shadow.metrics';
import { ShadowChoice } from '../rollout/traffic-plan';
import { scoreScene } from '../scene/scene-scorer';
import { FeatureFrame, featureFrame } from '../transforms/feature-frame';

/** What a shadow run compares against: the served version's scores of every candidate. */
export interface ShadowJob {
  scene: string;
  primary: string;
  shadow: ShadowChoice;
  /** The request's features as the primary version saw them (fetched once, shared). */
  frame: FeatureFrame;
  scores: Float32Array;
  /** Items the response returned: the default k of the comparison. */
  returned: number;
  /** Absolute deadline (performance.now) of the shadow run, if any. */
  deadline?: number;
}

/**
 * Scores requests with the shadow version after their response is computed, off the response
 * path: the caller never waits for it and never sees its failure. At most SHADOW_MAX_IN_FLIGHT
 * runs at once on this replica; a run beyond that is shed (counted), so a slow shadow can never
 * take the serving version's workers from it.
 */
@Injectable()
export class ShadowRunner {
  private readonly warnings = new ThrottledWarnings(new Logger(ShadowRunner.name));
  private inFlight = 0;

  constructor(
    private readonly registry: SceneRegistry,
    private readonly engine: ScoringEngine,
    private readonly metrics: ShadowMetrics,
    private readonly config: PipelineConfig,
  ) {}

  /** Starts the run and returns at once; the promise is for tests and never rejects. */
  start(job: ShadowJob): Promise<void> {
    const { scene, shadow, primary } = job;
    if (this.inFlight >= this.config.SHADOW_MAX_IN_FLIGHT) {
      this.metrics.recordFailure(scene, shadow.version, primary, 'shed');
      return Promise.resolve();
    }
    this.inFlight++;
    return this.run(job).finally(() => this.inFlight--);
  }

  private async run(job: ShadowJob): Promise<void> {
    const { scene, shadow, primary } = job;
    let lease;
    try {
      lease = this.registry.acquire(scene, shadow.version);
    } catch {
      this.metrics.recordFailure(scene, shadow.version, primary, 'not_loaded');
      return;
    }
    try {
      // Bad values were reported once, by the serving version: the shadow counts none of them.
      const frame = featureFrame({ ...job.frame, onBadValue: undefined });
      const { scores } = await scoreScene(lease.scene, this.engine, frame, {
        deadline: job.deadline,
      });
      const k = shadow.topK ?? job.returned;
      this.metrics.record(scene, shadow.version, primary, compareShadow(job.scores, scores, k));
    } catch (error) {
      const reason = error instanceof DeadlineExceededError ? 'timeout' : 'failed';
      this.metrics.recordFailure(scene, shadow.version, primary, reason);
      this.warnings.warn(
        `shadow ${scene}/${shadow.version} against ${primary} ${reason}: ${(error as Error).message}`,
      );
    } finally {
      lease.release();
    }
  }
}
