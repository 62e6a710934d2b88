import { ExecutionProviderUnavailableError, ModelLoadError, WorkerCrashedError } from '@app/common';
import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { ModelMetadata } from '../tensor-types';
import { FromWorker, ToWorker, WireTensor, WorkerInit } from './worker-protocol';

export interface BatchResult {
  outputs: Record<string, WireTensor>;
  computeMs: number;
}

export interface InstanceReady {
  provider: string;
  metadata: ModelMetadata;
  warmupMs: number;
  skipped: string[];
}

// Under ts-jest/swc-node (tests, benchmarks) this file is .ts and so is the worker: register
// swc in the worker too. The built service runs the compiled .js directly.
const WORKER_FILE = join(__dirname, `model-worker${extname(__filename)}`);
const WORKER_EXEC_ARGV = extname(__filename) === '.ts' ? ['--require', '@swc-node/register'] : [];

/**
 * One model instance: a worker thread with its own onnxruntime session, running one batch at a
 * time. If the thread dies, the batch in flight fails with WorkerCrashedError (never left
 * pending) and `onExit` tells the pool to replace it.
 */
export class ModelInstance {
  readonly worker: Worker;
  /** Kept here because Worker.threadId reads -1 once the thread has exited. */
  readonly threadId: number;
  readonly ready: Promise<InstanceReady>;
  private inFlight:
    { batchId: number; resolve: (r: BatchResult) => void; reject: (e: Error) => void } | undefined;
  private nextBatchId = 0;
  private alive = true;
  private started = false;

  constructor(
    readonly modelId: string,
    init: WorkerInit,
    private readonly onExit: (instance: ModelInstance, error: Error) => void,
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

  get busy(): boolean {
    return this.inFlight !== undefined;
  }

  get isAlive(): boolean {
    return this.alive;
  }

  run(feeds: Record<string, WireTensor>): Promise<BatchResult> {
    if (this.inFlight) throw new Error(`instance of ${this.modelId} is busy`);
    if (!this.alive)
      return Promise.reject(new WorkerCrashedError(`model ${this.modelId}: worker is gone`));
    const batchId = ++this.nextBatchId;
    return new Promise<BatchResult>((resolve, reject) => {
      this.inFlight = { batchId, resolve, reject };
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
    this.inFlight?.reject(new WorkerCrashedError(`model ${this.modelId}: instance closed`));
    this.inFlight = undefined;
    await this.worker.terminate();
  }

  private settle(message: FromWorker): void {
    if (
      (message.type !== 'result' && message.type !== 'run-failed') ||
      message.batchId !== this.inFlight?.batchId
    )
      return;
    const { resolve, reject } = this.inFlight;
    this.inFlight = undefined;
    if (message.type === 'result')
      resolve({ outputs: message.outputs, computeMs: message.computeMs });
    else reject(new Error(`model ${this.modelId}: ${message.message}`));
  }

  private die(error: Error): void {
    if (!this.alive) return;
    this.alive = false;
    const inFlight = this.inFlight;
    this.inFlight = undefined;
    inFlight?.reject(
      new WorkerCrashedError(
        `model ${this.modelId}: worker died with a batch in flight (${error.message})`,
      ),
    );
    // A worker that never started is reported through `ready`; only a serving one is replaced.
    if (this.started) this.onExit(this, error);
  }
}
