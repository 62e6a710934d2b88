import { ExecutionProviderUnavailableError, ModelLoadError, WorkerCrashedError } from '@app/common';
import { Worker } from 'node:worker_threads';
import { ModelMetadata } from '../tensor-types';
import { BatchResult } from './batch-pool';
import { answered, ThreadReserve } from './thread-reserve';
import { FromWorker, ToWorker, WireTensor, WorkerInit } from './worker-protocol';

export interface InstanceReady {
  provider: string;
  metadata: ModelMetadata;
  warmupMs: number;
  skipped: string[];
}

/** One batch running and one queued behind it. */
const MAX_LOAD = 2;
/** A thread that has not ended its session this long after `release` is stopped instead. */
const RELEASE_TIMEOUT_MS = 10_000;

/**
 * One model instance: a worker thread (from the ThreadReserve) with its own onnxruntime session,
 * running one batch at a time, with room for one more queued behind it (so the thread never waits
 * for the event loop between batches). If the thread dies, its batches fail with
 * WorkerCrashedError (never left pending) and `onExit` tells the pool to replace it; `onIdle` is
 * not called then: a dead instance is never idle, and the pool gives back its core slot on
 * `onExit`. Closed, a serving instance ends its session and gives its thread back to the
 * reserve.
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
  private onMessage!: (message: FromWorker) => void;
  private onStartExit!: (code: number) => void;
  private readonly onError = (error: Error) => this.die(error);
  private readonly onThreadExit = (code: number) => this.die(new Error(`exit code ${code}`));

  constructor(
    readonly modelId: string,
    init: WorkerInit,
    private readonly reserve: ThreadReserve,
    private readonly onExit: (instance: ModelInstance, error: Error) => void,
    /** Called each time a live instance has answered its last batch (running or queued). */
    private readonly onIdle: (instance: ModelInstance) => void = () => undefined,
  ) {
    this.worker = reserve.take();
    this.threadId = this.worker.threadId;
    this.ready = new Promise<InstanceReady>((resolve, reject) => {
      this.onMessage = (message: FromWorker) => {
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
      this.onStartExit = (code: number) =>
        reject(new ModelLoadError(`model ${modelId}: worker exited (${code}) while starting`));
    });
    this.ready.catch(() => undefined);
    this.worker.on('message', this.onMessage);
    this.worker.once('exit', this.onStartExit);
    this.worker.on('error', this.onError);
    this.worker.on('exit', this.onThreadExit);
    this.post({ type: 'init', init });
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
      this.post(
        { type: 'run', batchId, feeds },
        Object.values(feeds).map((f) => f.buffer),
      );
    });
  }

  /**
   * Ends the instance; a batch still in flight fails. A serving instance ends its session and
   * gives its thread back to the reserve (stopped there if the reserve is full); one that never
   * started, or does not answer, has its thread stopped. Callers drain first: terminating a
   * worker inside onnxruntime's run() aborts the process (onnxruntime-node 1.30), while a
   * release waits behind any run.
   */
  async close(): Promise<void> {
    const serving = this.alive && this.started;
    this.alive = false;
    this.failAll(new WorkerCrashedError(`model ${this.modelId}: instance closed`));
    if (serving && (await this.release())) {
      this.detach();
      await this.reserve.give(this.worker);
      return;
    }
    // Listeners stay: an error while it stops must not go unhandled (this instance is no longer
    // alive, so they do nothing).
    await this.worker.terminate();
  }

  private post(message: ToWorker, transfer: ArrayBuffer[] = []): void {
    this.worker.postMessage(message, transfer);
  }

  /** True once the thread has ended its session; false if it exits or takes too long. */
  private release(): Promise<boolean> {
    const released = answered(this.worker, 'released', RELEASE_TIMEOUT_MS);
    this.post({ type: 'release' });
    return released;
  }

  /** Removes this instance's listeners: the thread may serve another instance next. */
  private detach(): void {
    this.worker.off('message', this.onMessage);
    this.worker.off('exit', this.onStartExit);
    this.worker.off('error', this.onError);
    this.worker.off('exit', this.onThreadExit);
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
