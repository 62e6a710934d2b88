/**
 * npm run bench:scoring — the batched engine against the raw limit (raw-limit.ts) of the example
 * CTR model alone, in one process run. The raw sweep (batch sizes 64-4,096 x 1..cores intra-op
 * threads) picks the limit's configuration once; then BENCH_ROUNDS rounds (default 3) each run the
 * raw limit and the engine phases back to back: 3,000-row requests (2 in flight;
 * BENCH_LARGE_IN_FLIGHT), 64 concurrent 50-row requests with dynamic batching on, and the same
 * with batching off. Every ratio is taken within a round; the report gives the median over rounds
 * and the spread. BENCH_SECONDS (default 4) per phase. Prints a table, then one JSON line.
 */
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { ScoringConfig } from '@app/scoring';
import { WorkerScoringEngine } from '@app/scoring/testing';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { closedLoop, copyFeeds, ctrFeeds, LoopResult, percentile } from './bench-util';
import { RawLimit, RawRound } from './raw-limit';
import { fixed, RoundLog, roundsFromEnv, secondsFromEnv } from './rounds';

const MODEL = join(__dirname, '../../models/feed/v1/ctr.onnx');
const SECONDS = secondsFromEnv('BENCH_SECONDS', 4);
const ROUNDS = roundsFromEnv();
const CORES = availableParallelism();
// Engine layout under test; the defaults are the service's defaults (one instance per core).
const INSTANCES = Number(process.env.BENCH_INSTANCES ?? CORES);
const INTRA_OP = Number(process.env.BENCH_INTRA_OP_THREADS ?? 1);
const LARGE_IN_FLIGHT = Number(process.env.BENCH_LARGE_IN_FLIGHT ?? 2);
/** Rows per onnxruntime run, as the example bundle sets (0: each batch in one run). */
const MAX_RUN_ROWS = Number(process.env.BENCH_MAX_RUN_ROWS ?? 256);

const RATIOS = [
  'large_ratio_to_raw',
  'small_batched_ratio_to_raw',
  'small_batched_vs_unbatched',
] as const;

async function startEngine(): Promise<WorkerScoringEngine> {
  const config = Object.assign(new ScoringConfig(), {
    SCORING_MAX_CONCURRENT_BATCHES: CORES,
    SCORING_DEFAULT_INSTANCES: INSTANCES,
  });
  const engine = new WorkerScoringEngine(config);
  const session = { intraOpThreads: INTRA_OP, maxRunRows: MAX_RUN_ROWS };
  await engine.load({
    id: 'batched',
    file: MODEL,
    batching: { maxBatchRows: 1024, maxQueueDelayMicros: 2000 },
    session,
  });
  await engine.load({ id: 'unbatched', file: MODEL, batching: { enabled: false }, session });
  return engine;
}

const large = ctrFeeds(3000, 7);
const small = ctrFeeds(50, 9);

async function engineRound(engine: WorkerScoringEngine, warm: number) {
  // Warm each path (JIT, worker caches) before its first measurement.
  const run = async (callers: number, rows: number, call: () => Promise<unknown>) => {
    if (warm > 0) await closedLoop(callers, warm, rows, call);
    return closedLoop(callers, SECONDS, rows, call);
  };
  const largeRun = await run(LARGE_IN_FLIGHT, 3000, () =>
    engine.score('batched', copyFeeds(large)),
  );
  const smallBatched = await run(64, 50, () => engine.score('batched', copyFeeds(small)));
  const smallUnbatched = await run(64, 50, () => engine.score('unbatched', copyFeeds(small)));
  return { largeRun, smallBatched, smallUnbatched };
}

function row(name: string, r: LoopResult, limit: number): string {
  const p = (q: number) => percentile(r.latenciesMs, q).toFixed(2).padStart(7);
  return (
    `  ${name.padEnd(34)} ${Math.round(r.rowsPerS).toString().padStart(8)} rows/s  ` +
    `x${(r.rowsPerS / limit).toFixed(2)} raw  p50 ${p(50)} ms  p99 ${p(99)} ms  ` +
    `event loop p99 ${r.eventLoopP99Ms.toFixed(2)} ms max ${r.eventLoopMaxMs.toFixed(2)} ms`
  );
}

function rawLine(r: RawRound): string {
  return (
    `  raw limit ${Math.round(r.limit)} rows/s (one session: ${Math.round(r.singleRowsPerS)}, ` +
    `one per core in parallel: ${Math.round(r.parallelRowsPerS)})`
  );
}

async function main(): Promise<void> {
  Logger.overrideLogger(['error']);
  console.log(
    `bench:scoring on ${CORES} cores, ${ROUNDS} round(s) of ${SECONDS} s phases, model ${MODEL}`,
  );
  console.log(
    `engine: ${INSTANCES} instance(s) x ${INTRA_OP} intra-op thread(s), runs of at most ${MAX_RUN_ROWS} rows (0: whole batches), ${CORES} concurrent batches`,
  );
  const raw = RawLimit.open([MODEL], CORES);
  await raw.sweep(SECONDS / 7);
  for (const line of raw.sweepTable()) console.log(line);
  const best = raw.bestCell();
  console.log(
    `limit layouts: (a) ${best.threads} thread(s) x batch ${best.batch}; (b) ${raw.describeParallel()}\n`,
  );

  const engine = await startEngine();
  const log = new RoundLog();
  let eventLoopMax = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    const limits = await raw.measure(SECONDS);
    const { largeRun, smallBatched, smallUnbatched } = await engineRound(
      engine,
      round === 1 ? 0.5 : 0,
    );
    console.log(`round ${round}/${ROUNDS}`);
    console.log(rawLine(limits));
    console.log(
      row(`engine, 3,000-row requests (${LARGE_IN_FLIGHT} in flight)`, largeRun, limits.limit),
    );
    console.log(row('engine, 64 x 50 rows, batching on', smallBatched, limits.limit));
    console.log(row('engine, 64 x 50 rows, batching off', smallUnbatched, limits.limit));
    const runs = [largeRun, smallBatched, smallUnbatched];
    eventLoopMax = Math.max(eventLoopMax, ...runs.map((r) => r.eventLoopMaxMs));
    log.add({
      raw: limits.limit,
      raw_single: limits.singleRowsPerS,
      raw_parallel: limits.parallelRowsPerS,
      large: largeRun.rowsPerS,
      small_batched: smallBatched.rowsPerS,
      small_unbatched: smallUnbatched.rowsPerS,
      large_ratio_to_raw: largeRun.rowsPerS / limits.limit,
      small_batched_ratio_to_raw: smallBatched.rowsPerS / limits.limit,
      small_batched_vs_unbatched: smallBatched.rowsPerS / smallUnbatched.rowsPerS,
      large_p99: percentile(largeRun.latenciesMs, 99),
      small_p99: percentile(smallBatched.latenciesMs, 99),
      small_unbatched_p99: percentile(smallUnbatched.latenciesMs, 99),
      event_loop_p99: Math.max(...runs.map((r) => r.eventLoopP99Ms)),
    });
  }
  await engine.onApplicationShutdown();
  await raw.close();

  const spread = log.spread('large_ratio_to_raw');
  console.log(
    `\nmedian over ${ROUNDS} round(s): large x${spread.median.toFixed(2)} raw ` +
      `(rounds ${spread.min.toFixed(2)}-${spread.max.toFixed(2)}), small batched ` +
      `x${log.median('small_batched_ratio_to_raw').toFixed(2)} raw`,
  );
  console.log(
    JSON.stringify({
      cores: CORES,
      raw_rows_per_s: Math.round(log.median('raw')),
      raw_single_session_rows_per_s: Math.round(log.median('raw_single')),
      raw_parallel_rows_per_s: Math.round(log.median('raw_parallel')),
      engine_large_rows_per_s: Math.round(log.median('large')),
      engine_small_batched_rows_per_s: Math.round(log.median('small_batched')),
      engine_small_unbatched_rows_per_s: Math.round(log.median('small_unbatched')),
      large_ratio_to_raw: fixed(log.median('large_ratio_to_raw')),
      small_batched_ratio_to_raw: fixed(log.median('small_batched_ratio_to_raw')),
      small_batched_vs_unbatched: fixed(log.median('small_batched_vs_unbatched')),
      large_p99_ms: fixed(log.median('large_p99'), 2),
      small_p99_ms: fixed(log.median('small_p99'), 2),
      small_unbatched_p99_ms: fixed(log.median('small_unbatched_p99'), 2),
      event_loop_p99_ms: fixed(log.median('event_loop_p99'), 2),
      event_loop_max_ms: fixed(eventLoopMax, 2),
      rounds: ROUNDS,
      ratio_spread: fixed(spread.relative),
      ...log.ratioDetails(RATIOS),
    }),
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
