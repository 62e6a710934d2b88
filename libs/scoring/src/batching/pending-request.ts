import { InputFeeds, OutputTensors } from '../tensor-types';

/** A request inside the batcher: its rows are dispatched in one or more slices. */
export class PendingRequest {
  /** Next row not yet dispatched. */
  next = 0;
  /** Rows not yet returned (dispatched or not). */
  remaining: number;
  outputs: OutputTensors | undefined;
  settled = false;
  dispatchedAt: number | undefined;
  /** Fires at the deadline, whether the rows are still queued or already running. */
  deadlineTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly feeds: InputFeeds,
    readonly rows: number,
    readonly enqueuedAt: number,
    /** performance.now() at which the request fails with DeadlineExceededError; Infinity for none. */
    readonly deadline: number,
    private readonly onResolve: (outputs: OutputTensors) => void,
    private readonly onReject: (error: Error) => void,
  ) {
    this.remaining = rows;
  }

  get undispatched(): number {
    return this.rows - this.next;
  }

  resolve(outputs: OutputTensors): void {
    if (this.settle()) this.onResolve(outputs);
  }

  reject(error: Error): void {
    if (this.settle()) this.onReject(error);
  }

  private settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    clearTimeout(this.deadlineTimer);
    return true;
  }
}

/** Rows [start, end) of one request inside a batch. */
export interface Slice {
  request: PendingRequest;
  start: number;
  end: number;
}
