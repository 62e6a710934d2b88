/**
 * The physical limit of a scene, defined once for every benchmark: raw onnxruntime-node running
 * all the scene's models over the same rows (a row counts once it has gone through every model).
 * The limit is the better of two layouts:
 *   (a) one session per model on one thread, the best of batch sizes 64-4,096 x intra-op threads
 *       1..cores (found by `sweep`);
 *   (b) one single-threaded session per model per core, in parallel worker threads, each scoring
 *       all the models over its own rows in a closed loop (at the best single-thread batch).
 * `sweep` picks the configuration once; `measure` re-measures both layouts for one round, so a
 * benchmark can interleave it with its system phases.
 */
import { availableParallelism } from 'node:os';
import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { rawSession } from './bench-util';
import { checkSessionInputs, randomTensors, RawModelSpec, readRawModelSpecs } from './raw-feeds';
import type { FromRawWorker, RawWorkerInit, ToRawWorker } from './raw-limit-worker';

export const RAW_BATCHES = [64, 128, 256, 512, 1024, 2048, 4096];

const WORKER_FILE = join(__dirname, `raw-limit-worker${extname(__filename)}`);
const WORKER_EXEC_ARGV = extname(__filename) === '.ts' ? ['--require', '@swc-node/register'] : [];

export interface SweepCell {
  threads: number;
  batch: number;
  rowsPerS: number;
}

export interface RawRound {
  /** Layout (a) at its best configuration. */
  singleRowsPerS: number;
  /** Layout (b): one single-threaded session per model per core, in parallel. */
  parallelRowsPerS: number;
  limit: number;
}

type Feeds = Record<string, Tensor>;

interface Loaded {
  session: InferenceSession;
  feeds: Feeds;
}

async function loadModels(specs: RawModelSpec[], threads: number): Promise<InferenceSession[]> {
  const sessions: InferenceSession[] = [];
  for (const spec of specs) {
    const session = await rawSession(spec.file, threads);
    checkSessionInputs(spec, session);
    sessions.push(session);
  }
  return sessions;
}

function withFeeds(specs: RawModelSpec[], sessions: InferenceSession[], batch: number): Loaded[] {
  return sessions.map((session, i) => {
    const feeds: Feeds = randomTensors(specs[i], batch, batch);
    return { session, feeds };
  });
}

/** All models over the same rows, on this thread, for `ms`: rows/s. */
async function runSequential(models: Loaded[], batch: number, ms: number): Promise<number> {
  for (let i = 0; i < 3; i++) for (const m of models) await m.session.run(m.feeds);
  let rows = 0;
  const start = performance.now();
  while (performance.now() - start < ms) {
    for (const m of models) await m.session.run(m.feeds);
    rows += batch;
  }
  return rows / ((performance.now() - start) / 1000);
}

export class RawLimit {
  private cells: SweepCell[] = [];
  private single?: { cell: SweepCell; models: Loaded[] };
  private workers: Worker[] = [];

  private constructor(
    readonly files: readonly string[],
    private readonly specs: RawModelSpec[],
    readonly cores: number,
    readonly batches: readonly number[],
  ) {}

  static open(files: readonly string[], cores = availableParallelism(), batches = RAW_BATCHES) {
    if (files.length === 0) throw new Error('a raw limit needs at least one model file');
    return new RawLimit(files, readRawModelSpecs(files), cores, batches);
  }

  /** Layout (a) over the whole grid, `secondsPerCell` each; remembers the best cell. */
  async sweep(secondsPerCell: number): Promise<SweepCell[]> {
    this.cells = [];
    for (let threads = 1; threads <= this.cores; threads++) {
      const sessions = await loadModels(this.specs, threads);
      for (const batch of this.batches) {
        const models = withFeeds(this.specs, sessions, batch);
        const rowsPerS = await runSequential(models, batch, secondsPerCell * 1000);
        this.cells.push({ threads, batch, rowsPerS });
      }
      await Promise.all(sessions.map((s) => s.release()));
    }
    return this.cells;
  }

  /** One line per intra-op thread count: `batch:rows/s` cells. */
  sweepTable(): string[] {
    const lines: string[] = [];
    for (let threads = 1; threads <= this.cores; threads++) {
      const cells = this.cells.filter((c) => c.threads === threads);
      const text = cells.map((c) => `${c.batch}:${Math.round(c.rowsPerS / 1000)}k`).join('  ');
      lines.push(`raw onnxruntime, one session per model, ${threads} intra-op thread(s): ${text}`);
    }
    return lines;
  }

  bestCell(threads?: number): SweepCell {
    const cells = this.cells.filter((c) => threads === undefined || c.threads === threads);
    if (cells.length === 0) throw new Error('RawLimit.sweep() must run before measure()');
    return cells.reduce((best, c) => (c.rowsPerS > best.rowsPerS ? c : best));
  }

  /** Both layouts for `seconds` each, at the configuration the sweep chose. */
  async measure(seconds: number): Promise<RawRound> {
    const best = this.bestCell();
    if (this.single === undefined)
      this.single = {
        cell: best,
        models: withFeeds(this.specs, await loadModels(this.specs, best.threads), best.batch),
      };
    const singleRowsPerS = await runSequential(this.single.models, best.batch, seconds * 1000);
    const parallelRowsPerS = await this.runParallel(seconds * 1000);
    return { singleRowsPerS, parallelRowsPerS, limit: Math.max(singleRowsPerS, parallelRowsPerS) };
  }

  /**
   * CPU milliseconds a row costs raw onnxruntime in `round`, in its thriftier layout: (a) keeps
   * its intra-op threads busy, (b) one thread per core. Idle cores and the machine's drift move
   * rows/s much more than the CPU a row takes, so a benchmark's cpu_ratio sets this against its
   * system's CPU per row.
   */
  cpuMsPerRow(round: RawRound): number {
    return Math.min(
      (this.bestCell().threads * 1000) / round.singleRowsPerS,
      (this.cores * 1000) / round.parallelRowsPerS,
    );
  }

  describeParallel(): string {
    return `${this.cores} worker(s) x 1 session per model x 1 thread, batch ${this.bestCell(1).batch}`;
  }

  private async startWorkers(): Promise<void> {
    const batch = this.bestCell(1).batch;
    this.workers = Array.from({ length: this.cores }, (_, i) => {
      const init: RawWorkerInit = { specs: this.specs, batch, seed: 1000 + i };
      return new Worker(WORKER_FILE, { workerData: init, execArgv: WORKER_EXEC_ARGV });
    });
    await Promise.all(this.workers.map((w) => reply(w)));
  }

  private async runParallel(ms: number): Promise<number> {
    if (this.workers.length === 0) await this.startWorkers();
    const done = this.workers.map((w) => reply(w));
    for (const w of this.workers) w.postMessage({ type: 'run', ms } satisfies ToRawWorker);
    const results = await Promise.all(done);
    return results.reduce(
      (sum, r) => sum + (r.type === 'done' ? r.rows / (r.elapsedMs / 1000) : 0),
      0,
    );
  }

  async close(): Promise<void> {
    await Promise.all(this.single?.models.map((m) => m.session.release()) ?? []);
    this.single = undefined;
    for (const w of this.workers) w.postMessage({ type: 'close' } satisfies ToRawWorker);
    await Promise.all(this.workers.map((w) => new Promise((done) => w.once('exit', done))));
    this.workers = [];
  }
}

/** The worker's next message; a failure or an early exit rejects with its reason. */
function reply(worker: Worker): Promise<FromRawWorker> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number) => reject(new Error(`raw limit worker exited with ${code}`));
    worker.once('exit', onExit);
    worker.once('message', (message: FromRawWorker) => {
      worker.off('exit', onExit);
      if (message.type === 'failed') reject(new Error(`raw limit worker: ${message.message}`));
      else resolve(message);
    });
  });
}
