/**
 * A thread of bench:interference: either one core's raw onnxruntime (every model of the scene
 * over its own rows, in a closed loop, as the raw limit's parallel layout runs them) or the
 * co-runner beside them, which takes a share of the cores the way the ranker's serving thread
 * does. Each thread reports its own CPU time (Linux: /proc/thread-self/stat). Imports stay
 * relative: a bare Worker loads this file.
 */
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { procStatFields } from '../support/proc-stat';
import { rawSession } from './bench-util';
import { checkSessionInputs, randomTensors, RawModelSpec } from './raw-feeds';

/** What the co-runner does while the raw threads run. */
export type CoRunnerMode = 'alone' | 'wake' | 'compute' | 'alloc';

export type InterferenceInit =
  | { role: 'raw'; specs: RawModelSpec[]; batch: number; seed: number; nice: number }
  | { role: 'co'; share: number; burstMs: number };

export type ToInterferenceWorker =
  { type: 'run'; ms: number; mode: CoRunnerMode } | { type: 'close' };

export type FromInterferenceWorker =
  | { type: 'ready' }
  | { type: 'done'; rows: number; cpuMs: number; wallMs: number }
  | { type: 'failed'; message: string };

/** Input sets each raw thread rotates over, so that its inputs are not always in cache. */
const INPUT_SETS = 4;
/** Bytes of short-lived objects an `alloc` burst makes: what a 100-candidate request allocates. */
const ALLOC_BYTES_PER_BURST = 95 * 1024;
/** A `wake`: this much work, 1,000 times a second. */
const WAKE_WORK_MS = 0.01;

const init = workerData as InterferenceInit;
const port = parentPort!;
const post = (message: FromInterferenceWorker) => port.postMessage(message);
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** This thread's CPU time in ms (10 ms ticks). */
function threadCpuMs(): number {
  const field = procStatFields('/proc/thread-self/stat');
  return (Number(field(14)) + Number(field(15))) * 10;
}

async function raw(specs: RawModelSpec[], batch: number, seed: number, nice: number) {
  if (nice > 0) setPriority(0, nice);
  const models: { session: InferenceSession; sets: Record<string, Tensor>[] }[] = [];
  for (const spec of specs) {
    const session = await rawSession(spec.file, 1);
    checkSessionInputs(spec, session);
    const sets = Array.from({ length: INPUT_SETS }, (_, k) => randomTensors(spec, batch, seed + k));
    models.push({ session, sets });
  }
  for (let i = 0; i < 3; i++) for (const m of models) await m.session.run(m.sets[0]);
  port.on('message', (message: ToInterferenceWorker) => {
    if (message.type === 'close') {
      void Promise.all(models.map((m) => m.session.release())).then(() => port.close());
      return;
    }
    void (async () => {
      const cpu = threadCpuMs();
      const start = performance.now();
      let rows = 0;
      for (let k = 0; performance.now() - start < message.ms; k++) {
        for (const m of models) await m.session.run(m.sets[k % INPUT_SETS]);
        rows += batch;
      }
      post({ type: 'done', rows, cpuMs: threadCpuMs() - cpu, wallMs: performance.now() - start });
    })().catch((error: Error) => post({ type: 'failed', message: error.message }));
  });
  post({ type: 'ready' });
}

const scratch = new Float64Array(512);
let sink = 0;
let held: unknown[] = [];

/** Arithmetic over 4 kB (in cache) until `until` (performance.now() time). */
function computeUntil(until: number): void {
  let x = sink;
  while (performance.now() < until) {
    for (let i = 0; i < scratch.length; i++) {
      scratch[i] = scratch[i] * 0.999 + i;
      x += scratch[i];
    }
  }
  sink = x;
}

/** ~95 kB of objects that die young, a few bursts' worth kept alive as requests in flight are. */
function allocate(): void {
  const items: { id: string; score: number; rank: number; pair: number[] }[] = [];
  for (let bytes = 0, i = 0; bytes < ALLOC_BYTES_PER_BURST; i++, bytes += 96) {
    items.push({ id: `item-${i}`, score: i * 0.001, rank: i, pair: [i, i + 1] });
  }
  held.push(items, JSON.stringify(items.slice(0, 100)));
  if (held.length > 128) held = [];
}

function sleep(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}

function coRunner(share: number, burstMs: number) {
  port.on('message', (message: ToInterferenceWorker) => {
    if (message.type === 'close') {
      port.close();
      return;
    }
    const cpu = threadCpuMs();
    const start = performance.now();
    const pause = burstMs * (1 / share - 1);
    while (performance.now() - start < message.ms) {
      const burst = performance.now();
      if (message.mode === 'alone') sleep(10);
      else if (message.mode === 'wake') {
        computeUntil(burst + WAKE_WORK_MS);
        sleep(1 - WAKE_WORK_MS);
      } else {
        if (message.mode === 'alloc') allocate();
        computeUntil(burst + burstMs);
        sleep(pause);
      }
    }
    post({ type: 'done', rows: 0, cpuMs: threadCpuMs() - cpu, wallMs: performance.now() - start });
  });
  post({ type: 'ready' });
}

if (init.role === 'raw') {
  raw(init.specs, init.batch, init.seed, init.nice).catch((error: Error) =>
    post({ type: 'failed', message: error.message }),
  );
} else coRunner(init.share, init.burstMs);
