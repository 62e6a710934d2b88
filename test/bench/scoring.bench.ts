/**
 * npm run bench:scoring — the batched engine against raw onnxruntime-node on the example CTR
 * model, in one process run. Raw: one session on the main thread, best rows/s over batch sizes
 * 64-4,096 and 1..cores intra-op threads (the limit). Engine: 3,000-row requests (2 in flight;
 * BENCH_LARGE_IN_FLIGHT), one instance per core (BENCH_INSTANCES, BENCH_INTRA_OP_THREADS); 64
 * concurrent 50-row requests with dynamic batching on; the same with batching off. Prints a
 * table, then one JSON line.
 */
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { ScoringConfig } from '@app/scoring';
import { WorkerScoringEngine } from '@app/scoring/testing';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Tensor } from 'onnxruntime-node';
import { closedLoop, copyFeeds, ctrFeeds, LoopResult, percentile, rawSession } from './bench-util';

const MODEL = join(__dirname, '../../models/feed/v1/ctr.onnx');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const CORES = availableParallelism();
// Engine layout under test; the defaults are the service's defaults (one instance per core).
const INSTANCES = Number(process.env.BENCH_INSTANCES ?? CORES);
const INTRA_OP = Number(process.env.BENCH_INTRA_OP_THREADS ?? 1);
const LARGE_IN_FLIGHT = Number(process.env.BENCH_LARGE_IN_FLIGHT ?? 2);

async function raw(): Promise<{ best: number; table: string[] }> {
  const table: string[] = [];
  let best = 0;
  for (let threads = 1; threads <= CORES; threads++) {
    const session = await rawSession(MODEL, threads);
    const cells: string[] = [];
    for (const batch of [64, 128, 256, 512, 1024, 2048, 4096]) {
      const feeds = ctrFeeds(batch, batch);
      const tensors = Object.fromEntries(
        Object.entries(feeds).map(([name, f]) => [name, new Tensor(f.dtype, f.data, f.dims)]),
      );
      for (let i = 0; i < 3; i++) await session.run(tensors);
      let rows = 0;
      const start = performance.now();
      while (performance.now() - start < (SECONDS * 1000) / 7) {
        await session.run(tensors);
        rows += batch;
      }
      const rate = rows / ((performance.now() - start) / 1000);
      best = Math.max(best, rate);
      cells.push(`${batch}:${Math.round(rate / 1000)}k`);
    }
    await session.release();
    table.push(`raw onnxruntime, ${threads} intra-op thread(s): ${cells.join('  ')}`);
  }
  return { best, table };
}

async function engineRuns() {
  const config = Object.assign(new ScoringConfig(), {
    SCORING_MAX_CONCURRENT_BATCHES: CORES,
    SCORING_DEFAULT_INSTANCES: CORES,
  });
  const engine = new WorkerScoringEngine(config);
  await engine.load({
    id: 'batched',
    file: MODEL,
    batching: { maxBatchRows: 1024, maxQueueDelayMicros: 2000 },
  });
  await engine.load({ id: 'unbatched', file: MODEL, batching: { enabled: false } });

  const large = ctrFeeds(3000, 7);
  const small = ctrFeeds(50, 9);
  // Warm the path (JIT, worker caches) before measuring.
  await closedLoop(2, 0.5, 3000, () => engine.score('batched', copyFeeds(large)));
  const largeRun = await closedLoop(LARGE_IN_FLIGHT, SECONDS, 3000, () =>
    engine.score('batched', copyFeeds(large)),
  );
  await closedLoop(64, 0.5, 50, () => engine.score('batched', copyFeeds(small)));
  const smallBatched = await closedLoop(64, SECONDS, 50, () =>
    engine.score('batched', copyFeeds(small)),
  );
  await closedLoop(64, 0.5, 50, () => engine.score('unbatched', copyFeeds(small)));
  const smallUnbatched = await closedLoop(64, SECONDS, 50, () =>
    engine.score('unbatched', copyFeeds(small)),
  );
  await engine.onApplicationShutdown();
  return { largeRun, smallBatched, smallUnbatched };
}

function row(name: string, r: LoopResult, rawBest: number): string {
  const p = (q: number) => percentile(r.latenciesMs, q).toFixed(2).padStart(7);
  return (
    `${name.padEnd(34)} ${Math.round(r.rowsPerS).toString().padStart(8)} rows/s  ` +
    `x${(r.rowsPerS / rawBest).toFixed(2)} raw  p50 ${p(50)} ms  p99 ${p(99)} ms  ` +
    `event loop p99 ${r.eventLoopP99Ms.toFixed(2)} ms max ${r.eventLoopMaxMs.toFixed(2)} ms`
  );
}

async function main(): Promise<void> {
  Logger.overrideLogger(['error']);
  console.log(`bench:scoring on ${CORES} cores, ${SECONDS} s per engine run, model ${MODEL}`);
  console.log(
    `engine: ${INSTANCES} instance(s) x ${INTRA_OP} intra-op thread(s), ${CORES} concurrent batches`,
  );
  const { best, table } = await raw();
  for (const line of table) console.log(line);
  console.log(`raw best: ${Math.round(best)} rows/s\n`);
  const { largeRun, smallBatched, smallUnbatched } = await engineRuns();
  console.log(row(`engine, 3,000-row requests (${LARGE_IN_FLIGHT} in flight)`, largeRun, best));
  console.log(row('engine, 64 x 50 rows, batching on', smallBatched, best));
  console.log(row('engine, 64 x 50 rows, batching off', smallUnbatched, best));
  const runs = [largeRun, smallBatched, smallUnbatched];
  console.log(
    JSON.stringify({
      cores: CORES,
      raw_rows_per_s: Math.round(best),
      engine_large_rows_per_s: Math.round(largeRun.rowsPerS),
      engine_small_batched_rows_per_s: Math.round(smallBatched.rowsPerS),
      engine_small_unbatched_rows_per_s: Math.round(smallUnbatched.rowsPerS),
      large_ratio_to_raw: +(largeRun.rowsPerS / best).toFixed(3),
      small_batched_ratio_to_raw: +(smallBatched.rowsPerS / best).toFixed(3),
      small_batched_vs_unbatched: +(smallBatched.rowsPerS / smallUnbatched.rowsPerS).toFixed(3),
      large_p99_ms: +percentile(largeRun.latenciesMs, 99).toFixed(2),
      small_p99_ms: +percentile(smallBatched.latenciesMs, 99).toFixed(2),
      small_unbatched_p99_ms: +percentile(smallUnbatched.latenciesMs, 99).toFixed(2),
      event_loop_p99_ms: +Math.max(...runs.map((r) => r.eventLoopP99Ms)).toFixed(2),
      event_loop_max_ms: +Math.max(...runs.map((r) => r.eventLoopMaxMs)).toFixed(2),
    }),
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
