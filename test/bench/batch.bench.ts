/**
 * npm run bench:batch — Kafka batch scoring against the scene's raw limit, on one machine, in one
 * run. The real worker runs as a child process (apps/batch-scorer/src/main.ts, its default
 * settings: in-memory demo features, the `feed` scene with ctr + mtl) on run-unique topics of the
 * local broker (deleted at the end). This process produces rank requests and reads the results;
 * while the worker idles between phases it runs the raw limit (raw-limit.ts: ctr + mtl over the
 * same rows). BENCH_ROUNDS rounds (default 3) each run: the raw limit (BENCH_SECONDS, default 5),
 * then BENCH_LARGE_REQUESTS requests of 1,000 candidates (default 800), then BENCH_SMALL_REQUESTS
 * of 100 candidates (default 8,000), both as a backlog, then the 1,000-candidate requests again
 * live. A phase's requests are serialised beforehand and produced as fast as the broker takes
 * them; it ends when the last of its results is read. A backlog phase produces them while the
 * worker is stopped (SIGSTOP, a second or two: far inside its session timeout) and counts its
 * rows/s from the moment the worker continues (SIGCONT): the worker drains a topic that holds the
 * phase, as a batch job does, and the producer, which in production runs elsewhere, takes no CPU
 * from it. A live phase produces while the worker consumes and counts from the first request
 * sent: on one machine the producer (this process) and the broker then share the two cores with
 * the worker. `ratio` is the backlog figure, `live_ratio` the live one; the broker and this
 * process's reader of results share the machine in both. Every requestId is checked: `lost` counts
 * requests without a result, `duplicates` results beyond the first of a requestId, `errors`
 * results that are not 200. Each phase also reads the worker's CPU per request from /proc (every
 * thread, its main thread, its model threads) and sets raw onnxruntime's CPU for as many rows
 * against it (`cpu_ratio`, as bench:rank does): the machine's drift moves rows/s far more than
 * the work a request takes. Prints the rounds and the target, then one JSON line; it reports a
 * miss, it does not fail on one.
 */
import 'reflect-metadata';
import { Message } from 'kafkajs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { BatchScorerProcess } from '../support/batch-scorer-process';
import { processCpuMs, threadCpuSince, threadMark } from '../support/proc-stat';
import { scriptStartedBroker } from '../support/script-broker';
import { RankTopics, rankRequest, ReadRecord, TEST_BROKER } from '../support/rank-topics';
import { RawLimit } from './raw-limit';
import { fixed, RoundLog, roundsFromEnv, secondsFromEnv } from './rounds';

const repoRoot = resolve(__dirname, '..', '..');
const MODELS = ['ctr.onnx', 'mtl.onnx'].map((f) => join(repoRoot, 'models/feed/v1', f));
const SECONDS = secondsFromEnv('BENCH_SECONDS', 5);
const SWEEP_SECONDS = secondsFromEnv('BENCH_SWEEP_SECONDS', 0.5);
const ROUNDS = roundsFromEnv();
const CORES = availableParallelism();
const PARTITIONS = 8;
const PHASE_TIMEOUT_MS = 300_000;
const TARGET = 0.8;

function count(name: string, fallback: number): number {
  const text = process.env[name];
  const value = text === undefined ? fallback : Number(text);
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`${name} must be a positive integer, got "${text}"`);
  return value;
}

const LARGE = { candidates: 1000, requests: count('BENCH_LARGE_REQUESTS', 800), chunk: 40 };
const SMALL = { candidates: 100, requests: count('BENCH_SMALL_REQUESTS', 8000), chunk: 400 };
type Size = typeof LARGE;

interface PhaseResult {
  rowsPerS: number;
  seconds: number;
  /** Produce requests the worker sent per second over the phase (its metrics). */
  produceRequestsPerS: number;
  lost: number;
  duplicates: number;
  errors: number;
  /** The worker's CPU per request over the phase (every thread), ms; NaN off Linux. */
  cpuMsPerRequest: number;
  /** ... of it, its main thread's and its model threads' (the threads at another nice value). */
  mainCpuMsPerRequest: number;
  modelCpuMsPerRequest: number;
  /** This process's CPU per request over the phase (the reader of results), ms. */
  readerCpuMsPerRequest: number;
  /** The broker's (when test/services/kafka.sh started it; else NaN), ms. */
  brokerCpuMsPerRequest: number;
  /** The cores each kept busy over the phase (CPU time over the phase's time). */
  cores: { worker: number; broker: number; reader: number };
}

/**
 * The pid of the local broker the bench uses (TEST_BROKER, RankTopics' broker) when
 * test/services/kafka.sh started it, this checkout's or another's (script-broker.ts); else
 * undefined, and the broker's CPU is not reported.
 */
const LOCAL_BROKER = /^(?:127\.0\.0\.1|localhost):(\d+)$/.exec(TEST_BROKER);
const BROKER_PID = LOCAL_BROKER
  ? scriptStartedBroker(
      process.env.RANKER_SERVICES_DIR ?? join(repoRoot, '.services'),
      Number(LOCAL_BROKER[1]),
    )?.pid
  : undefined;
const brokerCpuMs = (): number => (BROKER_PID === undefined ? NaN : processCpuMs(BROKER_PID));
const readerCpuMs = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** Every result read so far, by requestId; a phase waits on its own ids. */
class Results {
  private readonly seen = new Map<string, number>();
  private waiting?: { ids: Set<string>; left: number; done: (at: number) => void };
  errors = 0;
  total = 0;

  readonly add = (record: ReadRecord): void => {
    this.total++;
    const times = (this.seen.get(record.key) ?? 0) + 1;
    this.seen.set(record.key, times);
    if (times === 1 && record.headers['x-status'] !== '200') this.errors++;
    const waiting = this.waiting;
    if (times === 1 && waiting?.ids.has(record.key) && --waiting.left === 0) {
      this.waiting = undefined;
      waiting.done(performance.now());
    }
  };

  /** Resolves with the time the last of `ids` arrived, or undefined after `timeoutMs`. */
  until(ids: string[], timeoutMs: number): Promise<number | undefined> {
    const left = ids.filter((id) => !this.seen.has(id)).length;
    if (left === 0) return Promise.resolve(performance.now());
    return new Promise((done) => {
      const timer = setTimeout(() => {
        this.waiting = undefined;
        done(undefined);
      }, timeoutMs);
      this.waiting = {
        ids: new Set(ids),
        left,
        done: (at) => {
          clearTimeout(timer);
          done(at);
        },
      };
    });
  }

  missing(ids: string[]): number {
    return ids.filter((id) => !this.seen.has(id)).length;
  }

  duplicatesOf(ids: string[]): number {
    return ids.reduce((sum, id) => sum + Math.max(0, (this.seen.get(id) ?? 0) - 1), 0);
  }
}

function messages(tag: string, size: Size, requests: number): { ids: string[]; batch: Message[] } {
  const ids: string[] = [];
  const batch: Message[] = [];
  for (let n = 0; n < requests; n++) {
    const requestId = `${tag}-${n}`;
    ids.push(requestId);
    batch.push(rankRequest(n, size.candidates, { requestId }));
  }
  return { ids, batch };
}

/**
 * Produces a phase's requests to `worker` and waits for their results. With `backlog`, the
 * worker is stopped while they are produced and the clock starts when it continues; else it
 * starts at the first request sent. The worker's CPU (from /proc, per thread) counts over the
 * same span: stopped, it takes none.
 */
async function phase(
  topics: RankTopics,
  results: Results,
  tag: string,
  size: Size,
  worker: BatchScorerProcess,
  { requests = size.requests, backlog = false }: { requests?: number; backlog?: boolean } = {},
): Promise<PhaseResult> {
  const { ids, batch } = messages(tag, size, requests);
  const errorsBefore = results.errors;
  const done = results.until(ids, PHASE_TIMEOUT_MS);
  let started = performance.now();
  let mark = backlog ? undefined : threadMark(worker.pid);
  let others = { reader: readerCpuMs(), broker: brokerCpuMs() };
  const producesBefore = await worker.metric('ranker_batch_produce_requests_total');
  if (backlog) worker.kill('SIGSTOP');
  try {
    await topics.produce(batch, size.chunk);
  } finally {
    if (backlog) {
      mark = threadMark(worker.pid);
      others = { reader: readerCpuMs(), broker: brokerCpuMs() };
      worker.kill('SIGCONT');
    }
  }
  if (backlog) started = performance.now();
  const finished = await done;
  const cpu = threadCpuSince(mark, worker.pid);
  const reader = readerCpuMs() - others.reader;
  const broker = brokerCpuMs() - others.broker;
  const seconds = ((finished ?? performance.now()) - started) / 1000;
  const lost = results.missing(ids);
  const answered = requests - lost;
  const wallMs = seconds * 1000;
  const produces = (await worker.metric('ranker_batch_produce_requests_total')) - producesBefore;
  return {
    produceRequestsPerS: produces / seconds,
    rowsPerS: (answered * size.candidates) / seconds,
    seconds,
    lost,
    duplicates: results.duplicatesOf(ids),
    errors: results.errors - errorsBefore,
    cpuMsPerRequest: cpu.total / answered,
    mainCpuMsPerRequest: cpu.main / answered,
    modelCpuMsPerRequest: cpu.model / answered,
    readerCpuMsPerRequest: reader / answered,
    brokerCpuMsPerRequest: broker / answered,
    cores: { worker: cpu.total / wallMs, broker: broker / wallMs, reader: reader / wallMs },
  };
}

function phaseLine(name: string, p: PhaseResult, limit: number): string {
  return (
    `  ${name.padEnd(26)} ${Math.round(p.rowsPerS).toString().padStart(8)} rows/s  ` +
    `x${(p.rowsPerS / limit).toFixed(2)} raw  ${p.seconds.toFixed(1)} s  ` +
    `cpu ${p.cpuMsPerRequest.toFixed(2)} ms/request (main ${p.mainCpuMsPerRequest.toFixed(2)}, ` +
    `model threads ${p.modelCpuMsPerRequest.toFixed(2)}; broker ${p.brokerCpuMsPerRequest.toFixed(2)}, ` +
    `reader ${p.readerCpuMsPerRequest.toFixed(2)})  cores busy: worker ${p.cores.worker.toFixed(2)}, ` +
    `broker ${p.cores.broker.toFixed(2)}, reader ${p.cores.reader.toFixed(2)}  ` +
    `produce requests ${Math.round(p.produceRequestsPerS)}/s  ` +
    `lost ${p.lost}  duplicates ${p.duplicates}  errors ${p.errors}`
  );
}

async function main(): Promise<void> {
  console.log(
    `bench:batch on ${CORES} cores, ${ROUNDS} round(s): raw ${SECONDS} s, ` +
      `${LARGE.requests} x ${LARGE.candidates} and ${SMALL.requests} x ${SMALL.candidates} ` +
      `candidates as backlogs, then ${LARGE.requests} x ${LARGE.candidates} live, per round; ` +
      `scene feed (ctr + mtl), ${PARTITIONS} partitions, one worker`,
  );
  const topics = await RankTopics.create('bench', { partitions: PARTITIONS });
  const raw = RawLimit.open(MODELS, CORES);
  let worker: BatchScorerProcess | undefined;
  try {
    const results = new Results();
    // No offset commits: the reader never resumes from them, and on this machine each one costs
    // the reader and the broker CPU the worker would otherwise have (an OffsetCommit per batch
    // read, ~9,000 a run; README: bench:batch).
    await topics.read(topics.output, results.add, 20, { autoCommit: false });
    // e.g. BENCH_WORKER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the worker.
    const nodeArgs = (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean);
    worker = await BatchScorerProcess.start(topics.env(), { name: 'batch-scorer', nodeArgs });
    // JIT, GC, item rows and the consumer's fetch sizes settle before anything is measured: a
    // whole phase of each size, as a backlog and live. With a quarter of a phase, live, the first
    // round's worker took ~8% more CPU a request than the later ones (V8's helper threads
    // 0.71 ms a request against 0.27-0.37: still compiling; test/bench/RESULTS.md, bench:batch).
    for (const backlog of [true, false]) {
      await phase(topics, results, `warm-large-${backlog}`, LARGE, worker, { backlog });
      await phase(topics, results, `warm-small-${backlog}`, SMALL, worker, { backlog });
    }

    await raw.sweep(SWEEP_SECONDS);
    for (const line of raw.sweepTable()) console.log(line);
    const best = raw.bestCell();
    console.log(
      `limit layouts: (a) ${best.threads} thread(s) x batch ${best.batch}; (b) ${raw.describeParallel()}\n`,
    );

    const log = new RoundLog();
    const totals = { requests: 0, lost: 0, duplicates: 0, errors: 0 };
    for (let round = 1; round <= ROUNDS; round++) {
      const limits = await raw.measure(SECONDS);
      const large = await phase(topics, results, `r${round}-large`, LARGE, worker, {
        backlog: true,
      });
      const small = await phase(topics, results, `r${round}-small`, SMALL, worker, {
        backlog: true,
      });
      const live = await phase(topics, results, `r${round}-live`, LARGE, worker);
      console.log(`round ${round}/${ROUNDS}`);
      console.log(
        `  raw limit ${Math.round(limits.limit)} rows/s (one session per model: ` +
          `${Math.round(limits.singleRowsPerS)}, one per core in parallel: ${Math.round(limits.parallelRowsPerS)})`,
      );
      console.log(phaseLine(`${LARGE.candidates} candidates, backlog`, large, limits.limit));
      console.log(phaseLine(`${SMALL.candidates} candidates, backlog`, small, limits.limit));
      console.log(phaseLine(`${LARGE.candidates} candidates, live`, live, limits.limit));
      const rawCpuMsPerRow = raw.cpuMsPerRow(limits);
      const rawLarge = rawCpuMsPerRow * LARGE.candidates;
      const rawSmall = rawCpuMsPerRow * SMALL.candidates;
      console.log(
        `  cpu per request, raw onnxruntime: ${rawLarge.toFixed(2)} ms (${LARGE.candidates} rows), ` +
          `${rawSmall.toFixed(2)} ms (${SMALL.candidates} rows)`,
      );
      for (const p of [large, small, live]) {
        totals.lost += p.lost;
        totals.duplicates += p.duplicates;
        totals.errors += p.errors;
      }
      totals.requests += 2 * LARGE.requests + SMALL.requests;
      log.add({
        raw: limits.limit,
        raw_single: limits.singleRowsPerS,
        raw_parallel: limits.parallelRowsPerS,
        large: large.rowsPerS,
        ratio: large.rowsPerS / limits.limit,
        small: small.rowsPerS,
        small_ratio: small.rowsPerS / limits.limit,
        live: live.rowsPerS,
        live_ratio: live.rowsPerS / limits.limit,
        raw_cpu: rawLarge,
        cpu: large.cpuMsPerRequest,
        main_cpu: large.mainCpuMsPerRequest,
        model_cpu: large.modelCpuMsPerRequest,
        cpu_ratio: rawLarge / large.cpuMsPerRequest,
        model_cpu_ratio: rawLarge / large.modelCpuMsPerRequest,
        small_cpu: small.cpuMsPerRequest,
        small_cpu_ratio: rawSmall / small.cpuMsPerRequest,
        live_cpu_ratio: rawLarge / live.cpuMsPerRequest,
        broker_cpu: large.brokerCpuMsPerRequest,
        reader_cpu: large.readerCpuMsPerRequest,
        worker_cores: large.cores.worker,
        produces: large.produceRequestsPerS,
      });
    }

    const report = {
      cores: CORES,
      requests: totals.requests,
      candidates_per_request: { large: LARGE.candidates, small: SMALL.candidates },
      rows_per_s: Math.round(log.median('large')),
      raw_rows_per_s: Math.round(log.median('raw')),
      raw_single_session_rows_per_s: Math.round(log.median('raw_single')),
      raw_parallel_rows_per_s: Math.round(log.median('raw_parallel')),
      ratio: fixed(log.median('ratio')),
      small_rows_per_s: Math.round(log.median('small')),
      small_ratio: fixed(log.median('small_ratio')),
      live_rows_per_s: Math.round(log.median('live')),
      live_ratio: fixed(log.median('live_ratio')),
      raw_cpu_ms_per_large_request: fixed(log.median('raw_cpu'), 2),
      worker_cpu_ms_per_large_request: fixed(log.median('cpu'), 2),
      worker_main_thread_cpu_ms_per_large_request: fixed(log.median('main_cpu'), 2),
      worker_model_threads_cpu_ms_per_large_request: fixed(log.median('model_cpu'), 2),
      cpu_ratio: fixed(log.median('cpu_ratio')),
      model_cpu_ratio: fixed(log.median('model_cpu_ratio')),
      worker_cpu_ms_per_small_request: fixed(log.median('small_cpu'), 3),
      small_cpu_ratio: fixed(log.median('small_cpu_ratio')),
      live_cpu_ratio: fixed(log.median('live_cpu_ratio')),
      broker_cpu_ms_per_large_request: fixed(log.median('broker_cpu'), 2),
      reader_cpu_ms_per_large_request: fixed(log.median('reader_cpu'), 2),
      worker_cores_busy_large: fixed(log.median('worker_cores'), 2),
      produce_requests_per_s_large: Math.round(log.median('produces')),
      lost: totals.lost,
      duplicates: totals.duplicates,
      errors: totals.errors,
      worker_retries: await worker.metric('ranker_batch_retries_total'),
      worker_pauses: await worker.metric('ranker_batch_flow_control_total', 'event="pause"'),
      rounds: ROUNDS,
      ratio_spread: fixed(log.spread('ratio').relative),
      small_ratio_spread: fixed(log.spread('small_ratio').relative),
      live_ratio_spread: fixed(log.spread('live_ratio').relative),
      ...log.ratioDetails(['ratio', 'small_ratio', 'live_ratio', 'cpu_ratio']),
    };
    console.log(`\ntargets (median over ${ROUNDS} round(s)):`);
    const pass = report.ratio !== null && report.ratio >= TARGET;
    console.log(
      `  ratio >= ${TARGET} (1,000 candidates, backlog): ${report.ratio ?? 'n/a'} ${pass ? 'PASS' : 'FAIL'}` +
        ` (live: ${report.live_ratio ?? 'n/a'})`,
    );
    console.log(`  lost == 0: ${report.lost} ${report.lost === 0 ? 'PASS' : 'FAIL'}`);
    console.log(JSON.stringify(report));
  } catch (error) {
    if (worker !== undefined)
      console.error(`worker log (tail):\n${worker.logText().slice(-20_000)}`);
    throw error;
  } finally {
    await worker?.stop();
    await raw.close();
    await topics.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
