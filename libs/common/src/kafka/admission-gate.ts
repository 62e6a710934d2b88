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

/** The downstream queue (the scoring engine's fullest model queue): rows waiting, rows allowed. */
export interface QueueDepth {
  queuedRows: number;
  maxQueueRows: number;
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
 * backlog: at most `maxRequests` messages and `maxRows` rows in flight, and none that would take
 * the downstream queue (the scoring engine's, read through `queueDepth`) past `pauseAt` of its
 * room. The queue nearly full (at the mark, or the next message would pass it) holds everything
 * back until it drains to `resumeAt`; both are reported (paused/resumed) so the consumer stops
 * and restarts fetching. Waiters are admitted in arrival order.
 *
 * The rows of an admitted message reach the queue only a few awaits later (its features are
 * fetched first), so the gate counts the rows it admitted in the current event-loop turn as
 * already queued: a burst in one turn never takes the queue past `pauseAt`, while many small
 * messages still start together and share batches. (With a remote feature store rows may take
 * longer than a turn; an overshoot is then refused by the engine as overloaded and ranked again.)
 * The queue has no event of its own, so while held back by it the gate checks it every `pollMs`.
 */
export class AdmissionGate {
  private requests = 0;
  private rows = 0;
  private held = false;
  private closed = false;
  /** Rows admitted in this event-loop turn, not yet visible in the queue. */
  private burstRows = 0;
  private turnEnding = false;
  private depth: QueueDepth = { queuedRows: 0, maxQueueRows: Infinity };
  private waiting: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly limits: AdmissionLimits,
    private readonly queueDepth: () => QueueDepth,
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
    this.checkQueue(rows);
    if (this.held || this.requests >= this.limits.maxRequests) return false;
    if (this.requests > 0 && this.rows + rows > this.limits.maxRows) return false;
    if (this.fits(rows)) return true;
    // Nearly full: this message would take the queue past the mark.
    this.hold();
    return false;
  }

  /** Into an empty queue anything goes (else a message larger than the mark would never start). */
  private fits(rows: number): boolean {
    const coming = this.depth.queuedRows + this.burstRows;
    return coming === 0 || coming + rows <= this.limits.pauseAt * this.depth.maxQueueRows;
  }

  private take(rows: number): void {
    this.requests++;
    this.rows += rows;
    this.burstRows += rows;
    if (this.turnEnding) return;
    // Next turn the rows admitted in this one are in the queue (or on their way, see above).
    this.turnEnding = true;
    setImmediate(() => {
      this.turnEnding = false;
      this.burstRows = 0;
      if (!this.closed) this.admitWaiting();
    });
  }

  private admitWaiting(): void {
    // With nobody waiting the queue is still watched: a paused consumer fetches nothing, so no
    // new waiter would ever come to notice the drain.
    if (this.waiting.length === 0) this.checkQueue(0);
    while (this.waiting.length > 0 && this.admits(this.waiting[0].rows)) {
      const waiter = this.waiting.shift()!;
      this.take(waiter.rows);
      waiter.admit(true);
    }
    this.pollWhileHeld();
  }

  /** Pauses at the mark; resumes once drained to resumeAt and the next message (`rows`) fits. */
  private checkQueue(rows: number): void {
    this.depth = this.queueDepth();
    if (!this.held && this.fill >= this.limits.pauseAt) this.hold();
    else if (this.held && this.fill <= this.limits.resumeAt && this.fits(rows)) {
      this.held = false;
      this.events.resumed(this.fill);
    }
  }

  private get fill(): number {
    return (this.depth.queuedRows + this.burstRows) / this.depth.maxQueueRows;
  }

  private hold(): void {
    if (this.held) return;
    this.held = true;
    this.events.paused(this.fill);
  }

  /** Releases and turn ends wake waiters held by the limits; only the queue needs watching. */
  private pollWhileHeld(): void {
    if (!this.held || this.timer !== undefined || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.admitWaiting();
    }, this.pollMs);
  }
}
