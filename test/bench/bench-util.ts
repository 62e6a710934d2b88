import { applyOrtTelemetry, InputFeeds } from '@app/scoring';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';
import { InferenceSession } from 'onnxruntime-node';

// Raw onnxruntime runs as the service's model threads do, with its telemetry off (the engine's
// default). Here, on the main thread as the benchmark loads, before any raw session starts.
if (isMainThread) applyOrtTelemetry(false);

/** The yardstick: one plain onnxruntime session on this thread, as a caller would make it. */
export function rawSession(model: string, intraOpThreads: number): Promise<InferenceSession> {
  return InferenceSession.create(model, {
    intraOpNumThreads: intraOpThreads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
}

/** Random CTR-model feeds: 26 id columns in [0, 1000) and 13 dense columns. */
export function ctrFeeds(rows: number, seed = 1): InputFeeds {
  let s = seed >>> 0;
  const next = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const ids = new BigInt64Array(rows * 26);
  const low = new Int32Array(ids.buffer);
  for (let i = 0; i < rows * 26; i++) low[2 * i] = Math.floor(next() * 1000);
  const dense = new Float32Array(rows * 13);
  for (let i = 0; i < dense.length; i++) dense[i] = next() * 2 - 1;
  return {
    sparse_ids: { dtype: 'int64', data: ids, dims: [rows, 26] },
    dense: { dtype: 'float32', data: dense, dims: [rows, 13] },
  };
}

/** A fresh copy (one block copy per input): the engine takes ownership of the buffers it gets. */
export function copyFeeds(feeds: InputFeeds): InputFeeds {
  const out: InputFeeds = {};
  for (const [name, feed] of Object.entries(feeds))
    out[name] = { ...feed, data: feed.data.slice() };
  return out;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export interface LoopResult {
  rowsPerS: number;
  latenciesMs: number[];
  eventLoopP99Ms: number;
  eventLoopMaxMs: number;
}

/**
 * Runs `callers` concurrent loops of `call` for `seconds`, counting rows and latencies, with the
 * event-loop delay monitored over the same window.
 */
export async function closedLoop(
  callers: number,
  seconds: number,
  rowsPerCall: number,
  call: (caller: number) => Promise<unknown>,
): Promise<LoopResult> {
  const monitor = monitorEventLoopDelay({
    resolution: Number(process.env.BENCH_EL_RESOLUTION_MS ?? 1),
  });
  const latencies: number[] = [];
  let rows = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  monitor.enable();
  await Promise.all(
    Array.from({ length: callers }, async (_, caller) => {
      while (performance.now() < end) {
        const t0 = performance.now();
        await call(caller);
        latencies.push(performance.now() - t0);
        rows += rowsPerCall;
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  monitor.disable();
  latencies.sort((a, b) => a - b);
  return {
    rowsPerS: rows / elapsed,
    latenciesMs: latencies,
    eventLoopP99Ms: monitor.percentile(99) / 1e6,
    eventLoopMaxMs: monitor.max / 1e6,
  };
}
