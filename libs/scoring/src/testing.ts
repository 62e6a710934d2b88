/**
 * For specs, benchmarks and tools only (`@app/scoring/testing`): the worker engine itself, with
 * its `pool()` hook, and the pool and instance classes that hook exposes. Services get the
 * engine through ScoringModule as ScoringEngine.
 */
export { WorkerScoringEngine } from './worker-scoring-engine';
export { InstancePool } from './worker/instance-pool';
export { ModelInstance } from './worker/model-instance';
export { CoreBudget } from './worker/core-budget';
