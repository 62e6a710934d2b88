import { ExecutionProviderUnavailableError, ModelLoadError, WorkerCrashedError } from '@app/common';
import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { ModelMetadata } from '../tensor-types';
import { BatchResult } from './batch-pool';
import { FromWorker, ToWorker, WireTensor, WorkerInit } from './worker-protocol';

export interface InstanceReady {
  provider: string;
  metadata: ModelMetadata;
  warmupMs: number;
  skipped: string[];
}

// Under ts-jest/swc-node (tests, benchmarks) this file is .ts and so is the worker: register
// swc in the worker too. The built service runs the compiled .js directly.
const WORKER_FILE = join(__dirname, `model-worker${extname(__filename)}`);
/** One batch running and one queued behind it. */
const MAX_LOAD = 2;
const WORKER_EXEC_ARGV = extname(__filename) === '.ts' ? ['--require', '@swc-node/register'] : [];

/**
 * One model instance: a worker thread with its own onnxruntime session, running one batch at a
 * time, with room for one more queued behind it (so the thread never waits for the event loop
 * between batches). If the thread dies, its batches fail with WorkerCrashedError (never left
 * pending) and `onExit` tells the pool to replace it; `onIdle` is not called then: a dead
 * instance is never idle, and the pool gives back its core slot on `onExit`.
 */
export class ModelInstance {
  readonly worker: Worker;
  /** Kept here because Worker.threadId reads -1 once the thread has exited. */
  readonly threadId: number;
  readonly ready: Promise<InstanceReady>;
  /** Batches sent and not yet answered, oldest first (the worker runs them in order). */
  private readonly inFlight = new Map<
    number,
    { resolve: (r: BatchResult) => void; reject: (e: Error) => void }
  >();
  private nextBatchId = 0;
  private alive = true;
  private started = false;

  constructor(
    readonly modelId: string,
    init: WorkerInit,
    private readonly onExit: (instance: ModelInstance, error: Error) => void,
    /** Called each time a live instance has answered its last batch (running or queued). */
    private readonly onIdle: (instance: ModelInstance) => void = () => undefined,
  ) {
    this.worker = new Worker(WORKER_FILE, { workerData: init, execArgv: WORKER_EXEC_ARGV });
    this.threadId = this.worker.threadId;
    this.ready = new Promise<InstanceReady>((resolve, reject) => {
      const onMessage = (message: FromWorker) => {
        if (message.type === 'ready') {
          this.started = true;
          resolve(message);
        } else if (message.type === 'init-failed') {
          const Err =
            message.code === 'EXECUTION_PROVIDER_UNAVAILABLE'
              ? ExecutionProviderUnavailableError
              : ModelLoadError;
          reject(new Err(`model ${modelId}: ${message.message}`));
        } else this.settle(message);
      };
      this.worker.on('message', onMessage);
      this.worker.once('exit', (code) =>
        reject(new ModelLoadError(`model ${modelId}: worker exited (${code}) while starting`)),
      );
    });
    this.ready.catch(() => undefined);
    this.worker.on('error', (error) => this.die(error));
    this.worker.on('exit', (code) => this.die(new Error(`exit code ${code}`)));
  }

  /** Batches sent and not answered: 0 idle, 1 running, 2 running plus one queued. */
  get load(): number {
    return this.inFlight.size;
  }

  get isAlive(): boolean {
    return this.alive;
  }

  get hasRoom(): boolean {
    return this.load < MAX_LOAD;
  }

  run(feeds: Record<string, WireTensor>): Promise<BatchResult> {
    if (this.load >= MAX_LOAD) throw new Error(`instance of ${this.modelId} is full`);
    if (!this.alive)
      return Promise.reject(new WorkerCrashedError(`model ${this.modelId}: worker is gone`));
    const batchId = ++this.nextBatchId;
    return new Promise<BatchResult>((resolve, reject) => {
      this.inFlight.set(batchId, { resolve, reject });
      const message: ToWorker = { type: 'run', batchId, feeds };
      this.worker.postMessage(
        message,
        Object.values(feeds).map((f) => f.buffer),
      );
    });
  }

  /**
   * Stops the thread; a batch still in flight fails. Callers drain first: terminating a worker
   * inside onnxruntime's run() aborts the process (onnxruntime-node 1.30).
   */
  async close(): Promise<void> {
    this.alive = false;
    this.failAll(new WorkerCrashedError(`model ${this.modelId}: instance closed`));
    await this.worker.terminate();
  }

  private settle(message: FromWorker): void {
    if (message.type !== 'result' && message.type !== 'run-failed') return;
    const pending = this.inFlight.get(message.batchId);
    if (!pending) return;
    this.inFlight.delete(message.batchId);
    if (message.type === 'result')
      pending.resolve({
        outputs: message.outputs,
        computeMs: message.computeMs,
        inputs: message.inputs,
      });
    else pending.reject(new Error(`model ${this.modelId}: ${message.message}`));
    if (this.inFlight.size === 0) this.onIdle(this);
  }

  private failAll(error: Error): void {
    if (this.inFlight.size === 0) return;
    const pending = [...this.inFlight.values()];
    this.inFlight.clear();
    for (const { reject } of pending) reject(error);
  }

  private die(error: Error): void {
    if (!this.alive) return;
    this.alive = false;
    this.failAll(
      new WorkerCrashedError(
        `model ${this.modelId}: worker died with a batch in flight (${error.message})`,
      ),
    );
    // A worker that never started is reported through `ready`; only a serving one is replaced.
    if (this.started) this.onExit(this, error);
  }
}
