/**
 * The public face of @app/scoring: the module, the ScoringEngine port, config, metrics and the
 * types callers build feeds and bundle specs from. Adapters and test hooks (the worker engine,
 * its pools and instances) are not here: specs, benchmarks and tools take them from
 * `@app/scoring/testing`.
 */
export * from './tensor-types';
export {
  EXECUTION_PROVIDERS,
  GRAPH_OPTIMIZATION_LEVELS,
  type BatchingOptions,
  type ExecutionProvider,
  type GraphOptimizationLevel,
  type ModelLoadOptions,
  type SessionOptions,
  type WarmupOptions,
} from './model-options';
export { applyOrtTelemetry, ORT_DISABLE_TELEMETRY } from './ort-telemetry';
export * from './scoring-engine.port';
export * from './scoring.config';
export * from './scoring.metrics';
export * from './scoring.module';
