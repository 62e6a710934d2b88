import { DeadlineExceededError, QueueDepth, WorkerCrashedError } from '@app/common';
import { BatchingOptions } from '../model-options';
import { InputFeeds, OutputTensors } from '../tensor-types';
import { BatchPool } from '../worker/batch-pool';
import { nextBatchSize } from './batch-size';
import { assembleFeeds, scatterOutputs } from './batch-tensors';
import { PendingRequest, Slice } from './pending-request';
import { BatcherEvents, QueueState, queueRefusal } from './queue-admission';
import { RequestQueue } from './request-queue';
import { TensorBufferPool } from './tensor-buffer-pool';

/** setTimeout fires at once past this delay (about 24.8 days): such a deadline is none. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Triton-style dynamic batcher for one model, shaped for ranking requests of 50-3,000 rows.
 * Rows of many requests merge into batches of up to maxBatchRows; a batch leaves when it is
 * full, when a preferred size can be filled, or when its oldest row has waited
 * maxQueueDelayMicros, and only when the pool has an idle instance (with a core slot), so rows
 * arriving while every instance is busy join the next batch; once a quarter of a full batch
 * waits, a batch also queues behind a running one, so instances never idle between batches. A
 * request larger than a batch is split into balanced sub-batches that run in parallel and are
 * reassembled in order. A request fails with DeadlineExceededError at its deadline, whether its
 * rows are queued or running. The queue holds maxQueueRows, and with maxQueueWaitMs no more than
 * that wait: a request beyond either is refused at once (see queueRefusal).
 */
export class DynamicBatcher implements QueueState {
  private readonly queue = new RequestQueue();
  private rowsWaiting = 0;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private readonly inFlight = new Set<Promise<void>>();
  private closed = false;
  private readonly unsubscribe: () => void;

  constructor(
    readonly modelId: string,
    readonly options: BatchingOptions,
    private readonly pool: BatchPool,
    private readonly events: BatcherEvents,
    /** Where batch input buffers come from and go back to; by default, none are kept. */
    private readonly buffers = new TensorBufferPool(0),
  ) {
    this.unsubscribe = pool.onAvailable(() => this.pump());
  }

  submit(feeds: InputFeeds, rows: number, deadline = Infinity): Promise<OutputTensors> {
    const refusal = this.refusal(rows);
    if (refusal !== undefined) return Promise.reject(refusal);
    return new Promise<OutputTensors>((resolve, reject) => {
      const now = performance.now();
      const request = new PendingRequest(feeds, rows, now, deadline, resolve, reject);
      if (deadline <= now) {
        this.events.rejected('deadline', 1);
        request.reject(deadlineError(request));
        return;
      }
      if (deadline - now <= MAX_TIMER_MS)
        request.deadlineTimer = setTimeout(() => this.expire(request), deadline - now);
      this.queue.push(request);
      this.rowsWaiting += rows;
      this.pump();
    });
  }

  /**
   * Throws what `submit` would refuse `rows` with now (and counts it as `submit` does), queueing
   * nothing. A caller about to queue one request's rows on several models checks them all first:
   * then no model scores rows of a request another model refused, and a refusal costs nothing
   * else (see scoreScene).
   */
  admit(rows: number): void {
    const refusal = this.refusal(rows);
    if (refusal !== undefined) throw refusal;
  }

  /** Why `rows` more cannot be queued now (the refusal counted), or undefined when they can. */
  private refusal(rows: number): Error | undefined {
    if (this.closed) return new WorkerCrashedError(`model ${this.modelId} is unloaded`);
    return queueRefusal(this, rows, this.events);
  }

  /**
   * How long the oldest rows still waiting for a batch have waited past their batch delay (0
   * with none waiting): the queue's own delay as it is now, which rows queued now would wait
   * about as long as while the models keep their pace. Read from the queue, not estimated from
   * the models' speed, so it holds whatever slows them (a slower machine, a swap, the other
   * models on the same cores). Rows held for maxQueueDelayMicros by design are not late.
   */
  oldestWaitMs(): number {
    if (this.rowsWaiting === 0) return 0;
    const first = this.queue.first();
    return first === undefined ? 0 : performance.now() - this.dueAt(first);
  }

  /**
   * When `request`'s rows are due to leave in a batch even if no more come: after
   * maxQueueDelayMicros, or at once with batching off (a batch then never waits for more rows).
   */
  private dueAt(request: PendingRequest): number {
    const { enabled, maxQueueDelayMicros } = this.options;
    return request.enqueuedAt + (enabled ? maxQueueDelayMicros / 1000 : 0);
  }

  /** Rows waiting to be dispatched (rows running are not counted). */
  get queuedRows(): number {
    return this.rowsWaiting;
  }

  /** Rows waiting to be dispatched (rows running are not counted), and the rows allowed to wait. */
  get queueDepth(): QueueDepth {
    return { queuedRows: this.rowsWaiting, maxQueueRows: this.options.maxQueueRows };
  }

  /** Refuses new work, fails what is still queued, and waits for batches in flight. */
  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe();
    clearTimeout(this.timer);
    this.failQueued(
      () =>
        new WorkerCrashedError(`model ${this.modelId} was unloaded before these rows were scored`),
      'worker_crashed',
    );
    await Promise.all(this.inFlight);
  }

  /** Called when an instance or a core slot may have become free. */
  pump(): void {
    if (this.closed) return;
    if (!this.pool.hasCapacity) {
      this.failQueued(
        () => new WorkerCrashedError(`model ${this.modelId}: no worker could be started`),
        'worker_crashed',
      );
      return;
    }
    const now = performance.now();
    let wake = Infinity;
    for (let first = this.queue.first(); first; first = this.queue.first()) {
      // An idle instance takes any due batch (and a core slot); a running one only a full batch
      // of a deep backlog, queued behind its current one, so its thread never waits for us.
      const idle = this.pool.idleCount();
      if (idle === 0 && !this.pool.canQueueBehind()) break;
      const queued = this.options.enabled ? this.rowsWaiting : first.undispatched;
      const waitedMicros = (now - first.enqueuedAt) * 1000;
      const size = nextBatchSize(this.options, queued, waitedMicros, idle);
      if (size === 0) {
        if (idle > 0) wake = this.dueAt(first);
        break;
      }
      const slices = this.take(size, now);
      if (slices.length > 0) this.dispatch(slices, now);
    }
    // Rows left waiting for the batch delay need a timer; deadlines have their own.
    if (wake !== Infinity) this.wakeAt(wake);
  }

  /**
   * Takes up to `size` rows from the head of the queue (one request only when batching is off).
   * A request whose deadline passed before its timer could fire is failed, not dispatched.
   */
  private take(size: number, now: number): Slice[] {
    const slices: Slice[] = [];
    let left = size;
    for (let request = this.queue.first(); left > 0 && request; request = this.queue.first()) {
      if (request.deadline <= now) {
        this.expire(request);
        continue;
      }
      const n = Math.min(left, request.undispatched);
      slices.push({ request, start: request.next, end: request.next + n });
      request.next += n;
      left -= n;
      this.rowsWaiting -= n;
      if (request.undispatched === 0) this.queue.shift();
      if (!this.options.enabled) break;
    }
    return slices;
  }

  private dispatch(slices: Slice[], now: number): void {
    let rows = 0;
    const queueMs: number[] = [];
    for (const { request, start, end } of slices) {
      rows += end - start;
      if (request.dispatchedAt === undefined) {
        request.dispatchedAt = now;
        queueMs.push(now - request.enqueuedAt);
      }
    }
    this.events.dispatched(rows, queueMs);
    const run = this.pool
      .run(assembleFeeds(slices, rows, this.buffers))
      .then(({ outputs, computeMs, inputs }) => {
        for (const buffer of inputs) this.buffers.give(buffer);
        // A request settled meanwhile (deadline, a sibling batch failed) gets nothing more.
        scatterOutputs(outputs, slices);
        this.events.completed(rows, computeMs, outputs);
        for (const { request, start, end } of slices) {
          request.remaining -= end - start;
          if (request.remaining === 0 && request.outputs) request.resolve(request.outputs);
        }
      })
      .catch((error: Error) => {
        const requests = new Set(slices.map((s) => s.request).filter((r) => !r.settled));
        this.events.rejected(
          error instanceof WorkerCrashedError ? 'worker_crashed' : 'run_failed',
          requests.size,
        );
        for (const request of requests) this.fail(request, error);
      })
      .finally(() => {
        this.inFlight.delete(run);
        this.pump();
      });
    this.inFlight.add(run);
  }

  /** The deadline timer: fails the request at once; rows still running are dropped on return. */
  private expire(request: PendingRequest): void {
    if (request.settled) return;
    this.events.rejected('deadline', 1);
    this.fail(request, deadlineError(request));
  }

  /** Fails a request; its rows still queued leave the queue in O(1) (see RequestQueue). */
  private fail(request: PendingRequest, error: Error): void {
    const queued = request.undispatched;
    request.reject(error);
    if (queued === 0) return;
    this.rowsWaiting -= queued;
    this.queue.settledInPlace();
  }

  private failQueued(error: () => Error, reason: 'worker_crashed'): void {
    const requests = this.queue.drain();
    this.rowsWaiting = 0;
    if (requests.length === 0) return;
    this.events.rejected(reason, requests.length);
    for (const request of requests) request.reject(error());
  }

  private wakeAt(when: number): void {
    if (this.timer && this.timerAt <= when) return;
    clearTimeout(this.timer);
    this.timerAt = when;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.timerAt = Infinity;
        this.pump();
      },
      Math.max(0, when - performance.now()),
    );
  }
}

function deadlineError(request: PendingRequest): DeadlineExceededError {
  return new DeadlineExceededError(
    `deadline passed with ${request.remaining} of ${request.rows} rows unscored; they were dropped`,
  );
}
