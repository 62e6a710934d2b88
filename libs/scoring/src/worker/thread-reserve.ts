import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { FromWorker, WorkerBoot } from './worker-protocol';

// Under ts-jest/swc-node (tests, benchmarks) this file is .ts and so is the worker: register
// swc in the worker too. The built service runs the compiled .js directly.
const WORKER_FILE = join(__dirname, `model-worker${extname(__filename)}`);
const WORKER_EXEC_ARGV = extname(__filename) === '.ts' ? ['--require', '@swc-node/register'] : [];

/** How a model instance got its thread, for the metric. */
export type ThreadSource = 'spare' | 'new';

/**
 * Model threads kept started with no model, so that a model instance takes one instead of
 * starting a thread. Starting a thread and loading onnxruntime in it costs ~65-70 ms of CPU,
 * the same for every model, while the session itself of the example models costs 4-20 ms: that
 * start is most of what loading a version beside traffic takes from the serving threads. The
 * reserve is filled once at boot (`fill`) and then by the threads of released versions (`give`):
 * a swap takes the threads its new version needs and the old version's come back for the next
 * one, so a steady swap cycle starts no thread at all. It holds at most `size` threads (0: none;
 * a thread beyond that is stopped). An idle thread costs ~9 MB and no CPU; one that dies while
 * idle leaves the reserve. Idle threads never keep the process alive.
 */
export class ThreadReserve {
  private readonly idle: Worker[] = [];
  /** Each idle thread's exit listener: a thread that dies while idle leaves the reserve. */
  private readonly onExit = new Map<Worker, () => void>();
  /** Threads `fill` is starting, not yet idle. */
  private booting = 0;
  private closed = false;

  constructor(
    /** Threads kept idle at most (SCORING_SPARE_THREADS). */
    readonly size: number,
    /** Nice value of every model thread (SCORING_WORKER_NICE). */
    private readonly nice: number,
    private readonly onTake: (source: ThreadSource) => void = () => undefined,
    private readonly onChange: (idle: number) => void = () => undefined,
  ) {}

  get idleCount(): number {
    return this.idle.length;
  }

  /** For tests and diagnostics: the idle threads, the next one taken last. */
  get idleThreads(): readonly Worker[] {
    return this.idle;
  }

  /** A started idle thread when there is one, else a new thread (its init waits in its queue). */
  take(): Worker {
    const spare = this.idle.pop();
    if (spare !== undefined) {
      this.unwatch(spare);
      spare.ref();
      this.onTake('spare');
      this.onChange(this.idle.length);
      return spare;
    }
    this.onTake('new');
    return this.start();
  }

  /**
   * Keeps a thread whose session was released; false (and the thread is stopped) when the
   * reserve is full or closed.
   */
  async give(worker: Worker): Promise<boolean> {
    if (this.closed || this.idle.length + this.booting >= this.size) {
      await stop(worker);
      return false;
    }
    this.keep(worker);
    return true;
  }

  /** Starts threads one after another until `size` are idle or starting; resolves when done. */
  async fill(): Promise<void> {
    while (!this.closed && this.idle.length + this.booting < this.size) {
      this.booting++;
      const worker = this.start();
      const booted = await answered(worker, 'booted');
      this.booting--;
      if (booted && !this.closed) this.keep(worker);
      else void stop(worker);
      if (!booted) return;
    }
  }

  /** Stops every idle thread; threads given later are stopped at once. */
  async close(): Promise<void> {
    this.closed = true;
    const idle = this.idle.splice(0);
    this.onChange(0);
    await Promise.all(idle.map((worker) => worker.terminate()));
  }

  private start(): Worker {
    const boot: WorkerBoot = { nice: this.nice };
    return new Worker(WORKER_FILE, { workerData: boot, execArgv: WORKER_EXEC_ARGV });
  }

  private keep(worker: Worker): void {
    const onExit = () => {
      this.unwatch(worker);
      const at = this.idle.indexOf(worker);
      if (at >= 0) this.idle.splice(at, 1);
      this.onChange(this.idle.length);
    };
    this.onExit.set(worker, onExit);
    worker.unref();
    worker.on('error', onIdleError);
    worker.on('exit', onExit);
    this.idle.push(worker);
    this.onChange(this.idle.length);
  }

  private unwatch(worker: Worker): void {
    worker.off('error', onIdleError);
    const onExit = this.onExit.get(worker);
    if (onExit) worker.off('exit', onExit);
    this.onExit.delete(worker);
  }
}

/** An idle thread has nothing to fail; its exit takes it out of the reserve. */
function onIdleError(): void {}

/** Stops a thread no one listens to, so an error while it stops is not unhandled. */
function stop(worker: Worker): Promise<number> {
  worker.on('error', onIdleError);
  return worker.terminate();
}

/**
 * Resolves true once `worker` posts a message of `type`, false if it exits first or `timeoutMs`
 * passes. While waiting, an error of the thread (which exits it) is not left unhandled.
 */
export function answered(
  worker: Worker,
  type: FromWorker['type'],
  timeoutMs = Infinity,
): Promise<boolean> {
  return new Promise((resolve) => {
    const onMessage = (message: FromWorker) => message.type === type && done(true);
    const onExit = () => done(false);
    const timer = Number.isFinite(timeoutMs) ? setTimeout(onExit, timeoutMs) : undefined;
    const done = (ok: boolean) => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('exit', onExit);
      worker.off('error', onIdleError);
      resolve(ok);
    };
    worker.on('message', onMessage);
    worker.on('exit', onExit);
    worker.on('error', onIdleError);
  });
}
