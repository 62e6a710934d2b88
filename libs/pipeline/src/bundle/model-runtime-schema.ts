import {
  BatchingOptions,
  EXECUTION_PROVIDERS,
  ExecutionProvider,
  GRAPH_OPTIMIZATION_LEVELS,
  GraphOptimizationLevel,
  WarmupOptions,
} from '@app/scoring';
import { ModelRuntimeSpec } from './bundle-definition';
import { SpecReader } from './spec-reader';

export const MODEL_RUNTIME_KEYS = [
  'instances',
  'intraOpThreads',
  'maxRunRows',
  'graphOptimizationLevel',
  'executionProviders',
  'batching',
  'warmup',
] as const;

/** Reads how a model runs (threads, providers, batching, warm-up); absent keys keep engine defaults. */
export function readModelRuntime(
  r: SpecReader,
  obj: Record<string, unknown>,
  path: string,
): ModelRuntimeSpec {
  const int = (value: unknown, at: string, min: number, max: number) =>
    value === undefined ? undefined : r.number(value, at, { min, max, integer: true });
  const runtime: ModelRuntimeSpec = {
    instances: int(obj.instances, `${path}.instances`, 1, 64),
    intraOpThreads: int(obj.intraOpThreads, `${path}.intraOpThreads`, 1, 64) ?? 1,
  };
  const maxRunRows = int(obj.maxRunRows, `${path}.maxRunRows`, 0, 65_536);
  if (maxRunRows !== undefined) runtime.maxRunRows = maxRunRows;
  if (obj.graphOptimizationLevel !== undefined) {
    runtime.graphOptimizationLevel = r.oneOf<GraphOptimizationLevel>(
      obj.graphOptimizationLevel,
      `${path}.graphOptimizationLevel`,
      GRAPH_OPTIMIZATION_LEVELS,
    );
  }
  if (obj.executionProviders !== undefined) {
    const list = r.array(obj.executionProviders, `${path}.executionProviders`, { min: 1 }) ?? [];
    const providers = list.map((p, i) =>
      r.oneOf<ExecutionProvider>(p, `${path}.executionProviders[${i}]`, EXECUTION_PROVIDERS),
    );
    if (providers.every(Boolean)) runtime.executionProviders = providers as ExecutionProvider[];
  }
  if (obj.batching !== undefined)
    runtime.batching = readBatching(r, obj.batching, `${path}.batching`, int);
  if (obj.warmup !== undefined) {
    const w = r.object(obj.warmup, `${path}.warmup`, ['batches', 'rows']) ?? {};
    const warmup: Partial<WarmupOptions> = {};
    if (w.batches !== undefined) warmup.batches = int(w.batches, `${path}.warmup.batches`, 0, 100);
    if (w.rows !== undefined) warmup.rows = int(w.rows, `${path}.warmup.rows`, 1, 100_000);
    runtime.warmup = warmup;
  }
  return runtime;
}

function readBatching(
  r: SpecReader,
  value: unknown,
  path: string,
  int: (value: unknown, at: string, min: number, max: number) => number | undefined,
): Partial<BatchingOptions> {
  const b =
    r.object(value, path, [
      'enabled',
      'maxBatchRows',
      'maxQueueDelayMicros',
      'preferredBatchRows',
      'maxQueueRows',
    ]) ?? {};
  const batching: Partial<BatchingOptions> = {};
  if (b.enabled !== undefined) {
    if (typeof b.enabled === 'boolean') batching.enabled = b.enabled;
    else r.fail(`${path}.enabled`, 'must be true or false');
  }
  if (b.maxBatchRows !== undefined)
    batching.maxBatchRows = int(b.maxBatchRows, `${path}.maxBatchRows`, 1, 65_536);
  if (b.maxQueueDelayMicros !== undefined) {
    batching.maxQueueDelayMicros = int(
      b.maxQueueDelayMicros,
      `${path}.maxQueueDelayMicros`,
      0,
      10_000_000,
    );
  }
  if (b.maxQueueRows !== undefined)
    batching.maxQueueRows = int(b.maxQueueRows, `${path}.maxQueueRows`, 1, 10_000_000);
  if (b.preferredBatchRows !== undefined) {
    const list = r.array(b.preferredBatchRows, `${path}.preferredBatchRows`) ?? [];
    const sizes = list.map((v, i) => int(v, `${path}.preferredBatchRows[${i}]`, 1, 65_536));
    if (sizes.every((s) => s !== undefined)) batching.preferredBatchRows = sizes as number[];
    const max = batching.maxBatchRows;
    if (max !== undefined && sizes.some((s) => s !== undefined && s > max)) {
      r.fail(`${path}.preferredBatchRows`, `sizes must not exceed maxBatchRows (${max})`);
    }
  }
  return batching;
}
