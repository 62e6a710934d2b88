/**
 * npm run bench:interference — what sharing the cores with a serving thread costs raw onnxruntime.
 * The ranker's model threads take more CPU a row than raw onnxruntime alone on the machine does
 * (bench:rank's `model_cpu_ratio` below 1 in the machine's faster state, and more so at 100
 * candidates), so this measures raw onnxruntime itself, in the raw limit's parallel layout (one
 * thread per core, each running every model of the `feed` scene over its own rows; here at nice
 * SCORING_WORKER_NICE's default 10, as the model threads run), with a third thread at nice 0 beside
 * it in one of these modes:
 *   alone    the third thread sleeps (the baseline);
 *   wake     it wakes 1,000 times a second for 10 µs (a timer's cost alone);
 *   compute  it takes BENCH_CO_SHARE of a core (default 0.5, the serving thread's share at 100
 *            candidates and c=64) in bursts of BENCH_CO_BURST_MS (default 0.4: one request's work)
 *            of arithmetic in cache;
 *   alloc    the same bursts, each first allocating ~95 kB of short-lived objects (what a
 *            100-candidate request allocates on the serving thread).
 * BENCH_ROUNDS rounds (default 3) of BENCH_SECONDS per mode (default 3), the order reversed every
 * round; each raw thread's CPU from /proc/thread-self/stat (Linux only). Prints raw onnxruntime's
 * CPU per row in each mode and its ratio to `alone` in the same round (median and range), then one
 * JSON line. It measures a cost; it has no target.
 */
import { availableParallelism } from 'node:os';
import { extname, join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import type {
  CoRunnerMode,
  FromInterferenceWorker,
  InterferenceInit,
  ToInterferenceWorker,
} from './interference-worker';
import { readRawModelSpecs } from './raw-feeds';
import { fixed, RoundLog, roundsFromEnv, secondsFromEnv } from './rounds';

const repoRoot = resolve(__dirname, '..', '..');
const MODELS = ['ctr.onnx', 'mtl.onnx'].map((f) => join(repoRoot, 'models/feed/v1', f));
const WORKER_FILE = join(__dirname, `interference-worker${extname(__filename)}`);
const WORKER_EXEC_ARGV = extname(__filename) === '.ts' ? ['--require', '@swc-node/register'] : [];
const MODES: CoRunnerMode[] = ['alone', 'wake', 'compute', 'alloc'];
/** The engine's default SCORING_WORKER_NICE: the model threads' priority. */
const MODEL_NICE = 10;
const BATCH = 1024;

function numberFromEnv(name: string, fallback: number, ok: (n: number) => boolean, rule: string) {
  const text = process.env[name];
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!ok(value)) throw new Error(`${name} must be ${rule}, got "${text}"`);
  return value;
}

/** The worker's next message of `type`; a failure or an exit rejects. */
function next<T extends FromInterferenceWorker['type']>(
  worker: Worker,
  type: T,
): Promise<Extract<FromInterferenceWorker, { type: T }>> {
  return new Promise((resolveReply, reject) => {
    const onExit = (code: number) => reject(new Error(`interference worker exited with ${code}`));
    worker.once('exit', onExit);
    worker.once('message', (message: FromInterferenceWorker) => {
      worker.off('exit', onExit);
      if (message.type === type)
        resolveReply(message as Extract<FromInterferenceWorker, { type: T }>);
      else if (message.type === 'failed')
        reject(new Error(`interference worker: ${message.message}`));
      else reject(new Error(`interference worker: ${message.type} where ${type} was due`));
    });
  });
}

function start(init: InterferenceInit): Worker {
  return new Worker(WORKER_FILE, { workerData: init, execArgv: WORKER_EXEC_ARGV });
}

async function main(): Promise<void> {
  if (process.platform !== 'linux') throw new Error('bench:interference reads /proc: Linux only');
  const rounds = roundsFromEnv();
  const seconds = secondsFromEnv('BENCH_SECONDS', 3);
  const burstMs = numberFromEnv(
    'BENCH_CO_BURST_MS',
    0.4,
    (n) => n > 0 && n <= 100,
    'in (0, 100] ms',
  );
  const share = numberFromEnv('BENCH_CO_SHARE', 0.5, (n) => n > 0 && n < 1, 'in (0, 1)');
  const cores = availableParallelism();
  const specs = readRawModelSpecs(MODELS);
  console.log(
    `bench:interference on ${cores} cores: raw onnxruntime (ctr + mtl, batch ${BATCH}, one thread ` +
      `per core at nice ${MODEL_NICE}) beside a thread at nice 0 taking ${share} of a core in ` +
      `${burstMs} ms bursts; ${rounds} round(s) of ${seconds} s per mode`,
  );
  const raws = Array.from({ length: cores }, (_, i) =>
    start({ role: 'raw', specs, batch: BATCH, seed: 1000 * (i + 1), nice: MODEL_NICE }),
  );
  const co = start({ role: 'co', share, burstMs });
  const all = [...raws, co];
  // Each worker's exit, watched from the start: one that died early has exited already.
  const exited = all.map((w) => new Promise((done) => w.once('exit', done)));
  try {
    await Promise.all(all.map((w) => next(w, 'ready')));
    const log = new RoundLog();
    for (let round = 1; round <= rounds; round++) {
      const order = round % 2 === 1 ? MODES : [...MODES].reverse();
      const usPerRow = new Map<CoRunnerMode, number>();
      const parts: string[] = [];
      for (const mode of order) {
        const done = all.map((w) => next(w, 'done'));
        const message: ToInterferenceWorker = { type: 'run', ms: seconds * 1000, mode };
        for (const worker of all) worker.postMessage(message);
        const results = await Promise.all(done);
        const rawResults = results.slice(0, raws.length);
        const rows = rawResults.reduce((sum, r) => sum + r.rows, 0);
        const cpuMs = rawResults.reduce((sum, r) => sum + r.cpuMs, 0);
        const coShare = results[raws.length].cpuMs / results[raws.length].wallMs;
        const us = (1000 * cpuMs) / rows;
        usPerRow.set(mode, us);
        log.add({ [`us_${mode}`]: us, [`share_${mode}`]: coShare });
        parts.push(`${mode} ${us.toFixed(2)} µs/row (co-runner ${coShare.toFixed(2)} of a core)`);
      }
      const alone = usPerRow.get('alone')!;
      for (const mode of MODES) log.add({ [`vs_${mode}`]: usPerRow.get(mode)! / alone });
      console.log(`round ${round}/${rounds}: ${parts.join(', ')}`);
    }
    console.log(
      '\nraw onnxruntime CPU per row (median over rounds), against alone in the same round:',
    );
    for (const mode of MODES) {
      const { min, max } = log.spread(`vs_${mode}`);
      console.log(
        `  ${mode.padEnd(8)} ${log.median(`us_${mode}`).toFixed(2)} µs/row  ` +
          `x${log.median(`vs_${mode}`).toFixed(3)} (rounds ${min.toFixed(3)}-${max.toFixed(3)})  ` +
          `co-runner ${log.median(`share_${mode}`).toFixed(2)} of a core`,
      );
    }
    const byMode = (prefix: string, digits: number) =>
      Object.fromEntries(MODES.map((m) => [m, fixed(log.median(`${prefix}_${m}`), digits)]));
    console.log(
      JSON.stringify({
        cores,
        batch: BATCH,
        seconds,
        rounds,
        co_runner_share: share,
        co_runner_burst_ms: burstMs,
        us_per_row: byMode('us', 3),
        vs_alone: byMode('vs', 3),
        co_runner_measured_share: byMode('share', 2),
        ...log.ratioDetails(MODES.map((m) => `vs_${m}`)),
      }),
    );
  } finally {
    for (const worker of all) worker.postMessage({ type: 'close' } satisfies ToInterferenceWorker);
    // A worker that does not close (one stuck after a failure) is ended rather than waited for.
    const closed = await Promise.race([
      Promise.all(exited).then(() => true),
      new Promise<boolean>((done) => setTimeout(() => done(false), 10_000).unref()),
    ]);
    if (!closed) await Promise.all(all.map((w) => w.terminate()));
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
