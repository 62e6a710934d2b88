export interface AdmissionLimits {
  /** Messages in flight at most. */
  maxRequests: number;
  /** Rows (work units) in flight at most; a message larger than this runs alone. */
  maxRows: number;
  /** Hold back new messages once the downstream queue is this full (0-1)... */
  pauseAt: number;
  /** ...until it has drained to this (0-1, below pauseAt). */
  resumeAt: number;
}

export interface AdmissionEvents {
  /** The downstream queue reached pauseAt: stop fetching. */
  paused(fill: number): void;
  /** It drained to resumeAt: fetch again. */
  resumed(fill: number): void;
}

interface Waiter {
  rows: number;
  admit: (admitted: boolean) => void;
}

/**
 * Decides when the next consumed message may start, so that memory stays bounded whatever the
 * backlog: at most `maxRequests` messages and `maxRows` rows in flight, and none at all while the
 * downstream queue (the scoring engine's, read through `queueFill`) is above `pauseAt`, until it
 * drains to `resumeAt`; crossing those marks is reported as paused/resumed so the consumer stops
 * and restarts fetching. Waiters are admitted in arrival order. The queue has no event of its own,
 * so while held back by it the gate checks it every `pollMs`.
 */
export class AdmissionGate {
  private requests = 0;
  private rows = 0;
  private held = false;
  private closed = false;
  private waiting: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly limits: AdmissionLimits,
    private readonly queueFill: () => number,
    private readonly events: AdmissionEvents,
    private readonly pollMs = 2,
  ) {}

  get inFlightRequests(): number {
    return this.requests;
  }

  get inFlightRows(): number {
    return this.rows;
  }

  /** Held back by the downstream queue (between a pause and its resume). */
  get paused(): boolean {
    return this.held;
  }

  /** Resolves true once a message of `rows` rows may start, false if the gate closed first. */
  acquire(rows: number): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    if (this.waiting.length === 0 && this.admits(rows)) {
      this.take(rows);
      return Promise.resolve(true);
    }
    return new Promise((admit) => {
      this.waiting.push({ rows, admit });
      this.pollWhileHeld();
    });
  }

  /** A message admitted with `rows` rows has finished. */
  release(rows: number): void {
    this.requests--;
    this.rows -= rows;
    this.admitWaiting();
  }

  /** Admits nothing more; every waiter is answered false. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    const waiting = this.waiting;
    this.waiting = [];
    for (const waiter of waiting) waiter.admit(false);
  }

  private admits(rows: number): boolean {
    this.checkQueue();
    if (this.held || this.requests >= this.limits.maxRequests) return false;
    return this.requests === 0 || this.rows + rows <= this.limits.maxRows;
  }

  private take(rows: number): void {
    this.requests++;
    this.rows += rows;
  }

  private admitWaiting(): void {
    // With nobody waiting the queue is still watched: a paused consumer fetches nothing, so no
    // new waiter would ever come to notice the drain.
    if (this.waiting.length === 0) this.checkQueue();
    while (this.waiting.length > 0 && this.admits(this.waiting[0].rows)) {
      const waiter = this.waiting.shift()!;
      this.take(waiter.rows);
      waiter.admit(true);
    }
    this.pollWhileHeld();
  }

  private checkQueue(): void {
    const fill = this.queueFill();
    if (!this.held && fill >= this.limits.pauseAt) {
      this.held = true;
      this.events.paused(fill);
    } else if (this.held && fill <= this.limits.resumeAt) {
      this.held = false;
      this.events.resumed(fill);
    }
  }

  /** Releases wake waiters held by the in-flight limits; only the queue needs watching. */
  private pollWhileHeld(): void {
    if (!this.held || this.timer !== undefined || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.admitWaiting();
    }, this.pollMs);
  }
}
