import { DeadlineExceededError, OverloadedError, WorkerCrashedError } from '@app/common';
import { BatchingOptions } from '../model-options';
import { InputFeeds, OutputTensors } from '../tensor-types';
import { InstancePool } from '../worker/instance-pool';
import { WireTensor } from '../worker/worker-protocol';
import { ModelInstance } from '../worker/model-instance';
import { assembleFeeds, scatterOutputs } from './batch-tensors';
import { CoreBudget } from './core-budget';
import { PendingRequest, Slice } from './pending-request';

/** Below this many rows per batch, splitting across idle instances costs more than it saves. */
const MIN_SPLIT_ROWS = 256;

export interface BatcherEvents {
  dispatched(rows: number, queueMs: number[]): void;
  completed(rows: number, computeMs: number, outputs: Record<string, WireTensor>): void;
  rejected(
    reason: 'overloaded' | 'deadline' | 'worker_crashed' | 'run_failed',
    requests: number,
  ): void;
}

/**
 * Triton-style dynamic batcher for one model, shaped for ranking requests of 50-3,000 rows.
 * Rows of many requests merge into batches of up to maxBatchRows; a batch leaves when it is
 * full, when a preferred size can be filled, or when its oldest row has waited
 * maxQueueDelayMicros, and only when an instance and a core slot are free, so rows arriving
 * while every instance is busy join the next batch; a full batch may also queue behind a
 * running one, so instances never idle between batches. A request larger than a batch is split
 * into balanced sub-batches that run in parallel and are reassembled in order.
 */
export class DynamicBatcher {
  private readonly queue: PendingRequest[] = [];
  private queuedRows = 0;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private readonly inFlight = new Set<Promise<void>>();
  private closed = false;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly modelId: string,
    private readonly options: BatchingOptions,
    private readonly pool: InstancePool,
    private readonly budget: CoreBudget,
    private readonly events: BatcherEvents,
  ) {
    this.unsubscribe = budget.subscribe(() => this.pump());
  }

  submit(feeds: InputFeeds, rows: number, deadline = Infinity): Promise<OutputTensors> {
    if (this.closed)
      return Promise.reject(new WorkerCrashedError(`model ${this.modelId} is unloaded`));
    if (this.queuedRows + rows > this.options.maxQueueRows) {
      this.events.rejected('overloaded', 1);
      return Promise.reject(
        new OverloadedError(
          `model ${this.modelId}: ${this.queuedRows} rows queued, ${rows} more would pass ${this.options.maxQueueRows}`,
        ),
      );
    }
    return new Promise<OutputTensors>((resolve, reject) => {
      this.queue.push(
        new PendingRequest(feeds, rows, performance.now(), deadline, resolve, reject),
      );
      this.queuedRows += rows;
      this.pump();
    });
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
    const now = performance.now();
    this.dropExpired(now);
    if (!this.pool.hasCapacity) {
      this.failQueued(
        () => new WorkerCrashedError(`model ${this.modelId}: no worker could be started`),
        'worker_crashed',
      );
      return;
    }
    let wake = Infinity;
    while (this.queue.length > 0) {
      // An idle instance takes any due batch (and a core slot); a running one only a full batch
      // of a deep backlog, queued behind its current one, so its thread never waits for us.
      const idle = this.budget.hasFree ? this.pool.idleCount() : 0;
      const target = idle > 0 ? this.pool.idle() : this.pool.withRoom();
      if (!target) break;
      const size = this.nextBatchSize(now, idle);
      if (size === 0) {
        if (idle > 0) wake = this.queue[0].enqueuedAt + this.options.maxQueueDelayMicros / 1000;
        break;
      }
      if (idle > 0) this.budget.acquire();
      this.dispatch(target, this.take(size), size, now);
    }
    // Rows left waiting need a timer for the batch delay and for the nearest deadline.
    if (this.queue.length > 0) this.wakeAt(wake);
  }

  /**
   * Rows for the next batch, 0 for none yet. With no idle instance, a full batch queues behind a
   * running one only when another full batch would still be left waiting: a deep backlog gains
   * from never letting a thread idle, a shallow one from merging more rows.
   */
  private nextBatchSize(now: number, idle: number): number {
    const { enabled, maxBatchRows, maxQueueDelayMicros, preferredBatchRows } = this.options;
    const queued = enabled ? this.queuedRows : this.queue[0].undispatched;
    if (idle === 0) return queued >= 2 * maxBatchRows ? maxBatchRows : 0;
    if (!enabled) return balanced(queued, maxBatchRows, idle);
    const waited = (now - this.queue[0].enqueuedAt) * 1000 >= maxQueueDelayMicros;
    if (queued >= maxBatchRows || waited) return balanced(queued, maxBatchRows, idle);
    let preferred = 0;
    for (const size of preferredBatchRows) if (size <= queued && size > preferred) preferred = size;
    return preferred;
  }

  /** Takes `size` rows from the head of the queue (one request only when batching is off). */
  private take(size: number): Slice[] {
    const slices: Slice[] = [];
    let left = size;
    while (left > 0 && this.queue.length > 0) {
      const request = this.queue[0];
      const n = Math.min(left, request.undispatched);
      slices.push({ request, start: request.next, end: request.next + n });
      request.next += n;
      left -= n;
      this.queuedRows -= n;
      if (request.undispatched === 0) this.queue.shift();
      if (!this.options.enabled) break;
    }
    return slices;
  }

  private dispatch(instance: ModelInstance, slices: Slice[], rows: number, now: number): void {
    const queueMs: number[] = [];
    for (const { request } of slices) {
      if (request.dispatchedAt === undefined) {
        request.dispatchedAt = now;
        queueMs.push(now - request.enqueuedAt);
      }
    }
    this.events.dispatched(rows, queueMs);
    const run = instance
      .run(assembleFeeds(slices, rows))
      .then(({ outputs, computeMs }) => {
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
        for (const request of requests) {
          this.removeFromQueue(request);
          request.reject(error);
        }
      })
      .finally(() => {
        this.inFlight.delete(run);
        this.pump();
      });
    this.inFlight.add(run);
  }

  private dropExpired(now: number): void {
    const expired = this.queue.filter((r) => r.deadline <= now);
    if (expired.length === 0) return;
    this.events.rejected('deadline', expired.length);
    for (const request of expired) {
      this.removeFromQueue(request);
      request.reject(
        new DeadlineExceededError(
          `deadline passed with ${request.undispatched} of ${request.rows} rows unscored; they were dropped`,
        ),
      );
    }
  }

  private removeFromQueue(request: PendingRequest): void {
    const index = this.queue.indexOf(request);
    if (index < 0) return;
    this.queue.splice(index, 1);
    this.queuedRows -= request.undispatched;
  }

  private failQueued(error: () => Error, reason: 'worker_crashed'): void {
    if (this.queue.length === 0) return;
    this.events.rejected(reason, this.queue.length);
    for (const request of this.queue.splice(0)) request.reject(error());
    this.queuedRows = 0;
  }

  private wakeAt(at: number): void {
    const nextDeadline = this.queue.reduce((min, r) => Math.min(min, r.deadline), Infinity);
    const when = Math.min(at, nextDeadline);
    if (when === Infinity || (this.timer && this.timerAt <= when)) return;
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

/** Rows for the next batch: balanced chunks of at most `max`, spread over idle instances. */
function balanced(queued: number, max: number, idle: number): number {
  let chunks = Math.ceil(queued / max);
  if (idle > chunks && queued >= 2 * MIN_SPLIT_ROWS)
    chunks = Math.min(idle, Math.floor(queued / MIN_SPLIT_ROWS));
  return Math.ceil(queued / chunks);
}
