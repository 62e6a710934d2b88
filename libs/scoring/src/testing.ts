/**
 * For specs, benchmarks and tools only (`@app/scoring/testing`): the worker engine itself, with
 * its `pool()` hook, and the pool and instance classes that hook exposes. Services get the
 * engine through ScoringModule as ScoringEngine.
 */
import { Registry } from 'prom-client';
import { ScoringConfig } from './scoring.config';
import { ScoringMetrics } from './scoring.metrics';
import { WorkerScoringEngine } from './worker-scoring-engine';

export { WorkerScoringEngine } from './worker-scoring-engine';
export { InstancePool } from './worker/instance-pool';
export { ModelInstance } from './worker/model-instance';
export { CoreBudget } from './worker/core-budget';

/** A real engine sized for specs: one instance per model, two core slots, its own metrics. */
export function smallWorkerEngine(registry = new Registry()): WorkerScoringEngine {
  return new WorkerScoringEngine(
    Object.assign(new ScoringConfig(), {
      SCORING_DEFAULT_INSTANCES: 1,
      SCORING_MAX_CONCURRENT_BATCHES: 2,
    }),
    new ScoringMetrics(registry),
  );
}
