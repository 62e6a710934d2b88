/**
 * npm run bench:rank — the whole rank path against the scene's raw limit, on one machine, in one
 * run. The real ranker runs as a child process (features in Redis under a run-unique prefix,
 * behind a warm item cache, the `feed` scene with both its models); this process drives it over
 * HTTP (test/tools/perf's load generator) and, while the ranker idles, runs the raw limit
 * (raw-limit.ts: ctr + mtl over the same rows). BENCH_ROUNDS rounds (default 3) each run: raw
 * limit, 3,000-candidate requests at concurrency 2 and 4, 100-candidate requests at concurrency
 * 64 (BENCH_SECONDS per phase, default 5). Main-thread figures come from inside the ranker
 * (ranker-probe.ts). Prints the rounds, the targets with pass/fail, then one JSON line; it
 * reports a miss, it does not fail on one.
 */
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { join, resolve } from 'node:path';
import { availableParallelism } from 'node:os';
import { LoadGenerator, StepResult } from '../tools/perf/load-generator';
import { buildBodies, idsFromFeatureFile } from '../tools/perf/request-bodies';
import { formatErrors, percentile } from '../tools/perf/step-summary';
import { seedFeatures } from './feature-seed';
import { RankerProcess } from './ranker-process';
import { RawLimit } from './raw-limit';
import { fixed, RoundLog, roundsFromEnv, secondsFromEnv } from './rounds';

const repoRoot = resolve(__dirname, '..', '..');
const FEATURES = join(repoRoot, 'models/demo/features.jsonl');
const MODELS = ['ctr.onnx', 'mtl.onnx'].map((f) => join(repoRoot, 'models/feed/v1', f));
const SECONDS = secondsFromEnv('BENCH_SECONDS', 5);
const SWEEP_SECONDS = secondsFromEnv('BENCH_SWEEP_SECONDS', 0.5);
const ROUNDS = roundsFromEnv();
const CORES = availableParallelism();
const LARGE = 3000;
const SMALL = 100;
const LARGE_CONCURRENCY = [2, 4];
const SMALL_CONCURRENCY = 64;

const TARGETS = [
  ['large_ratio', '>=', 0.8],
  ['small_ratio', '>=', 0.6],
  ['main_thread_ms_per_large_request', '<=', 5],
  ['event_loop_p99_ms', '<=', 10],
] as const;

interface Phase {
  rowsPerS: number;
  p99Ms: number;
  mainThreadMsPerRequest: number;
  /** CPU time per request: the main thread's, and the whole ranker process's (every thread). */
  mainThreadCpuMsPerRequest: number;
  processCpuMsPerRequest: number;
  /** The model threads' share of it (see ProbeReading.modelThreadsCpuMs); the rest: V8's helpers. */
  modelThreadsCpuMsPerRequest: number;
  /** CPU the load generator (this process) took per request: taken from the same cores. */
  loadCpuMsPerRequest: number;
  /** The main thread's GC pauses per request (scavenges, mark-compacts: see ProbeReading). */
  gcScavengeMsPerRequest: number;
  gcMarkCompactMsPerRequest: number;
  scavengesPerS: number;
  markCompactsPerS: number;
  loopP99Ms: number;
  loopMaxMs: number;
  result: StepResult;
}

/** One load phase, with the ranker's own main-thread figures over exactly that window. */
async function phase(
  ranker: RankerProcess,
  load: LoadGenerator,
  concurrency: number,
  rows: number,
): Promise<Phase> {
  await ranker.probe('mark');
  const loadCpu = process.cpuUsage();
  const result = await load.run({ mode: 'concurrency', level: concurrency, seconds: SECONDS });
  const { user, system } = process.cpuUsage(loadCpu);
  const inside = await ranker.probe('read');
  const sorted = Float64Array.from(result.latenciesMs).sort();
  return {
    rowsPerS: (result.ok * rows) / result.elapsedS,
    p99Ms: percentile(sorted, 99),
    mainThreadMsPerRequest: result.ok > 0 ? inside.activeMs / result.ok : NaN,
    mainThreadCpuMsPerRequest: result.ok > 0 ? (inside.mainThreadCpuMs ?? NaN) / result.ok : NaN,
    processCpuMsPerRequest: result.ok > 0 ? inside.processCpuMs / result.ok : NaN,
    modelThreadsCpuMsPerRequest:
      result.ok > 0 ? (inside.modelThreadsCpuMs ?? NaN) / result.ok : NaN,
    loadCpuMsPerRequest: result.ok > 0 ? (user + system) / 1000 / result.ok : NaN,
    gcScavengeMsPerRequest: result.ok > 0 ? inside.gcScavengeMs / result.ok : NaN,
    gcMarkCompactMsPerRequest: result.ok > 0 ? inside.gcMarkCompactMs / result.ok : NaN,
    scavengesPerS: inside.scavenges / result.elapsedS,
    markCompactsPerS: inside.markCompacts / result.elapsedS,
    loopP99Ms: inside.loopP99Ms,
    loopMaxMs: inside.loopMaxMs,
    result,
  };
}

function phaseLine(name: string, p: Phase, limit: number): string {
  return (
    `  ${name.padEnd(30)} ${Math.round(p.rowsPerS).toString().padStart(8)} rows/s  ` +
    `x${(p.rowsPerS / limit).toFixed(2)} raw  p99 ${p.p99Ms.toFixed(1).padStart(6)} ms  ` +
    `main thread ${p.mainThreadMsPerRequest.toFixed(2)} ms/request  ` +
    `cpu ${p.processCpuMsPerRequest.toFixed(2)} ms/request (main ${p.mainThreadCpuMsPerRequest.toFixed(2)}, ` +
    `model threads ${p.modelThreadsCpuMsPerRequest.toFixed(2)}, ` +
    `other ${otherThreadsCpu(p).toFixed(2)}; load generator ${p.loadCpuMsPerRequest.toFixed(3)})  ` +
    `gc pauses ${p.gcScavengeMsPerRequest.toFixed(2)} + ${p.gcMarkCompactMsPerRequest.toFixed(2)} ms/request ` +
    `(${p.scavengesPerS.toFixed(1)} scavenges/s, ${p.markCompactsPerS.toFixed(2)} mark-compacts/s)  ` +
    `event loop p99 ${p.loopP99Ms.toFixed(1)} ms max ${p.loopMaxMs.toFixed(1)} ms  ` +
    `errors ${formatErrors(p.result.errors)}`
  );
}

/** The ranker's CPU per request in neither its main thread nor its model threads: V8's helpers, libuv. */
function otherThreadsCpu(p: Phase): number {
  return p.processCpuMsPerRequest - p.mainThreadCpuMsPerRequest - p.modelThreadsCpuMsPerRequest;
}

/** Every item once (so the item cache holds them all), then a second of each load for the JIT. */
async function warm(load: LoadGenerator, items: string[], users: string[]): Promise<void> {
  for (let from = 0; from < items.length; from += LARGE) {
    const candidates = items.slice(from, from + LARGE).map((id) => ({ id }));
    const body = Buffer.from(JSON.stringify({ user: { id: users[0] }, candidates }));
    const answer = await load.send(body, 'always');
    if (answer.status !== 200)
      throw new Error(`warm-up request failed: ${answer.status} ${answer.body.toString()}`);
  }
}

async function main(): Promise<void> {
  Logger.overrideLogger(['error']);
  const errors: Record<string, number> = {};
  const prefix = `bench:rank:${process.pid}:${Date.now()}:`;
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  console.log(
    `bench:rank on ${CORES} cores, ${ROUNDS} round(s) of ${SECONDS} s phases, scene feed ` +
      `(ctr + mtl), features in Redis under ${prefix}`,
  );
  const seeded = await seedFeatures(FEATURES, prefix, redisUrl);
  let ranker: RankerProcess | undefined;
  const raw = RawLimit.open(MODELS, CORES);
  const loads: LoadGenerator[] = [];
  try {
    ranker = await RankerProcess.start({
      FEATURE_STORE: 'redis',
      REDIS_URL: redisUrl,
      FEATURES_REDIS_KEY_PREFIX: prefix,
      // The run must not outlive the cache: every phase is behind a warm item cache.
      ITEM_CACHE_TTL_MS: String(3_600_000),
    });
    const pools = await idsFromFeatureFile(FEATURES);
    const url = `${ranker.baseUrl}/v1/scenes/feed/rank`;
    const large = new LoadGenerator({
      url,
      bodies: buildBodies(pools, { candidates: LARGE, count: 32, seed: 1 }),
    });
    const small = new LoadGenerator({
      url,
      bodies: buildBodies(pools, { candidates: SMALL, count: 256, seed: 2 }),
    });
    loads.push(large, small);
    await warm(large, pools.items, pools.users);
    await large.run({ mode: 'concurrency', level: 2, seconds: 1 });
    await small.run({ mode: 'concurrency', level: SMALL_CONCURRENCY, seconds: 1 });

    await raw.sweep(SWEEP_SECONDS);
    for (const line of raw.sweepTable()) console.log(line);
    const best = raw.bestCell();
    console.log(
      `limit layouts: (a) ${best.threads} thread(s) x batch ${best.batch}; (b) ${raw.describeParallel()}\n`,
    );

    const log = new RoundLog();
    for (let round = 1; round <= ROUNDS; round++) {
      const limits = await raw.measure(SECONDS);
      const larges = [];
      for (const c of LARGE_CONCURRENCY) larges.push(await phase(ranker, large, c, LARGE));
      const smallRun = await phase(ranker, small, SMALL_CONCURRENCY, SMALL);
      console.log(`round ${round}/${ROUNDS}`);
      console.log(
        `  raw limit ${Math.round(limits.limit)} rows/s (one session per model: ` +
          `${Math.round(limits.singleRowsPerS)}, one per core in parallel: ${Math.round(limits.parallelRowsPerS)})`,
      );
      larges.forEach((p, i) =>
        console.log(phaseLine(`${LARGE} candidates, c=${LARGE_CONCURRENCY[i]}`, p, limits.limit)),
      );
      console.log(phaseLine(`${SMALL} candidates, c=${SMALL_CONCURRENCY}`, smallRun, limits.limit));
      for (const p of [...larges, smallRun])
        for (const [code, n] of Object.entries(p.result.errors))
          errors[code] = (errors[code] ?? 0) + n;
      // The large figure of a round is its better concurrency (the service's best operating point).
      const top = larges.reduce((a, b) => (b.rowsPerS > a.rowsPerS ? b : a));
      const rawCpuMsPerRow = raw.cpuMsPerRow(limits);
      console.log(
        `  cpu per request, raw onnxruntime: ${(rawCpuMsPerRow * LARGE).toFixed(2)} ms ` +
          `(${LARGE} rows), ${(rawCpuMsPerRow * SMALL).toFixed(2)} ms (${SMALL} rows)`,
      );
      const figures: Record<string, number> = {
        raw: limits.limit,
        raw_single: limits.singleRowsPerS,
        raw_parallel: limits.parallelRowsPerS,
        large: top.rowsPerS,
        large_ratio: top.rowsPerS / limits.limit,
        large_p99: top.p99Ms,
        small: smallRun.rowsPerS,
        small_ratio: smallRun.rowsPerS / limits.limit,
        small_p99: smallRun.p99Ms,
        main_thread: top.mainThreadMsPerRequest,
        main_thread_cpu: top.mainThreadCpuMsPerRequest,
        process_cpu: top.processCpuMsPerRequest,
        raw_cpu: rawCpuMsPerRow * LARGE,
        cpu_ratio: (rawCpuMsPerRow * LARGE) / top.processCpuMsPerRequest,
        model_cpu: top.modelThreadsCpuMsPerRequest,
        other_cpu: otherThreadsCpu(top),
        model_cpu_ratio: (rawCpuMsPerRow * LARGE) / top.modelThreadsCpuMsPerRequest,
        small_process_cpu: smallRun.processCpuMsPerRequest,
        small_cpu_ratio: (rawCpuMsPerRow * SMALL) / smallRun.processCpuMsPerRequest,
        small_main_cpu: smallRun.mainThreadCpuMsPerRequest,
        small_model_cpu: smallRun.modelThreadsCpuMsPerRequest,
        small_model_cpu_ratio: (rawCpuMsPerRow * SMALL) / smallRun.modelThreadsCpuMsPerRequest,
        load_cpu: top.loadCpuMsPerRequest,
        small_load_cpu: smallRun.loadCpuMsPerRequest,
        gc_scavenge: top.gcScavengeMsPerRequest,
        gc_mark_compact: top.gcMarkCompactMsPerRequest,
        small_gc_scavenge: smallRun.gcScavengeMsPerRequest,
        small_gc_mark_compact: smallRun.gcMarkCompactMsPerRequest,
        event_loop_p99: Math.max(...[...larges, smallRun].map((p) => p.loopP99Ms)),
        event_loop_max: Math.max(...[...larges, smallRun].map((p) => p.loopMaxMs)),
      };
      larges.forEach((p, i) => {
        figures[`large_c${LARGE_CONCURRENCY[i]}`] = p.rowsPerS;
        figures[`large_c${LARGE_CONCURRENCY[i]}_p99`] = p.p99Ms;
        figures[`large_c${LARGE_CONCURRENCY[i]}_main_thread`] = p.mainThreadMsPerRequest;
      });
      log.add(figures);
    }

    const report = {
      cores: CORES,
      raw_rows_per_s: Math.round(log.median('raw')),
      raw_single_session_rows_per_s: Math.round(log.median('raw_single')),
      raw_parallel_rows_per_s: Math.round(log.median('raw_parallel')),
      large_rows_per_s: Math.round(log.median('large')),
      large_ratio: fixed(log.median('large_ratio')),
      large_p99_ms: fixed(log.median('large_p99'), 1),
      small_rows_per_s: Math.round(log.median('small')),
      small_ratio: fixed(log.median('small_ratio')),
      small_p99_ms: fixed(log.median('small_p99'), 1),
      main_thread_ms_per_large_request: fixed(log.median('main_thread'), 2),
      main_thread_cpu_ms_per_large_request: fixed(log.median('main_thread_cpu'), 2),
      process_cpu_ms_per_large_request: fixed(log.median('process_cpu'), 2),
      raw_cpu_ms_per_large_request: fixed(log.median('raw_cpu'), 2),
      cpu_ratio: fixed(log.median('cpu_ratio')),
      model_threads_cpu_ms_per_large_request: fixed(log.median('model_cpu'), 2),
      other_threads_cpu_ms_per_large_request: fixed(log.median('other_cpu'), 2),
      model_cpu_ratio: fixed(log.median('model_cpu_ratio')),
      small_process_cpu_ms_per_request: fixed(log.median('small_process_cpu'), 3),
      small_main_thread_cpu_ms_per_request: fixed(log.median('small_main_cpu'), 3),
      small_model_threads_cpu_ms_per_request: fixed(log.median('small_model_cpu'), 3),
      small_cpu_ratio: fixed(log.median('small_cpu_ratio')),
      small_model_cpu_ratio: fixed(log.median('small_model_cpu_ratio')),
      main_thread_scavenge_ms_per_large_request: fixed(log.median('gc_scavenge'), 3),
      main_thread_mark_compact_ms_per_large_request: fixed(log.median('gc_mark_compact'), 3),
      small_main_thread_scavenge_ms_per_request: fixed(log.median('small_gc_scavenge'), 3),
      small_main_thread_mark_compact_ms_per_request: fixed(log.median('small_gc_mark_compact'), 3),
      load_cpu_ms_per_large_request: fixed(log.median('load_cpu'), 3),
      load_cpu_ms_per_small_request: fixed(log.median('small_load_cpu'), 3),
      event_loop_p99_ms: fixed(log.median('event_loop_p99'), 2),
      event_loop_max_ms: fixed(Math.max(...log.byRound('event_loop_max')), 2),
      large_by_concurrency: Object.fromEntries(
        LARGE_CONCURRENCY.map((c) => [
          c,
          {
            rows_per_s: Math.round(log.median(`large_c${c}`)),
            p99_ms: fixed(log.median(`large_c${c}_p99`), 1),
            main_thread_ms_per_request: fixed(log.median(`large_c${c}_main_thread`), 2),
          },
        ]),
      ),
      errors,
      rounds: ROUNDS,
      ratio_spread: fixed(log.spread('large_ratio').relative),
      small_ratio_spread: fixed(log.spread('small_ratio').relative),
      cpu_ratio_spread: fixed(log.spread('cpu_ratio').relative),
      ...log.ratioDetails(['large_ratio', 'small_ratio', 'cpu_ratio']),
    };
    console.log(`\ntargets (median over ${ROUNDS} round(s)):`);
    for (const [key, op, bound] of TARGETS) {
      const value = report[key];
      const pass = value !== null && (op === '>=' ? value >= bound : value <= bound);
      console.log(`  ${key} ${op} ${bound}: ${value ?? 'n/a'} ${pass ? 'PASS' : 'FAIL'}`);
    }
    if (Object.keys(errors).length > 0) console.log(`errors: ${formatErrors(errors)}`);
    console.log(JSON.stringify(report));
  } catch (error) {
    if (ranker !== undefined) console.error(`ranker log (tail):\n${ranker.logTail()}`);
    throw error;
  } finally {
    for (const load of loads) load.close();
    await ranker?.stop();
    await raw.close();
    await seeded.remove();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
