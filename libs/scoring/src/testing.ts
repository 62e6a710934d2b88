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
export { ThreadReserve } from './worker/thread-reserve';

/**
 * A real engine sized for specs: one instance per model, two core slots, no spare threads (see
 * the engine's own spec for those), its own metrics.
 */
export function smallWorkerEngine(registry = new Registry()): WorkerScoringEngine {
  return new WorkerScoringEngine(
    Object.assign(new ScoringConfig(), {
      SCORING_DEFAULT_INSTANCES: 1,
      SCORING_MAX_CONCURRENT_BATCHES: 2,
      SCORING_SPARE_THREADS: 0,
    }),
    new ScoringMetrics(registry),
  );
}
