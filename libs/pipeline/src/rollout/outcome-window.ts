/** Slots per window: the window slides in steps of a thirtieth of its length. */
const SLOTS = 30;
/** Latency buckets grow by 5% from 0.1 ms; the last one holds everything past 10 minutes. */
const GROWTH = 1.05;
const MIN_MS = 0.1;
const BUCKETS = Math.ceil(Math.log(600_000 / MIN_MS) / Math.log(GROWTH)) + 1;
const LOG_GROWTH = Math.log(GROWTH);

/** What one arm did over the window. */
export interface WindowStats {
  requests: number;
  errors: number;
  /** errors / requests; 0 with no requests. */
  errorRate: number;
  /**
   * 99th percentile latency in ms: the upper edge of the 5%-wide bucket holding it, so at most
   * 5% above the true value; undefined with no requests.
   */
  p99Ms?: number;
}

/**
 * Outcomes (ok or not, latency) of one arm over the last `windowMs`, in 30 time slots of
 * counts and a latency histogram each, with running totals: recording is O(1) and allocates
 * nothing, a p99 scans ~330 buckets. The clock is injected (monotonic milliseconds).
 */
export class OutcomeWindow {
  private readonly slotMs: number;
  private readonly slotCounts = new Float64Array(SLOTS);
  private readonly slotErrors = new Float64Array(SLOTS);
  private readonly slotLatency = new Uint32Array(SLOTS * BUCKETS);
  private readonly latency = new Float64Array(BUCKETS);
  private requests = 0;
  private errors = 0;
  /** Index (time / slotMs) of the newest slot; older ones sit behind it in the ring. */
  private head: number;

  constructor(
    windowMs: number,
    private readonly now: () => number,
  ) {
    this.slotMs = windowMs / SLOTS;
    this.head = Math.floor(now() / this.slotMs);
  }

  record(ok: boolean, latencyMs: number): void {
    const slot = this.advance() % SLOTS;
    const bucket = bucketOf(latencyMs);
    this.slotCounts[slot]++;
    this.slotLatency[slot * BUCKETS + bucket]++;
    this.latency[bucket]++;
    this.requests++;
    if (!ok) {
      this.slotErrors[slot]++;
      this.errors++;
    }
  }

  /** Requests and errors in the window, without the p99 (cheap enough for every request). */
  counts(): { requests: number; errors: number } {
    this.advance();
    return { requests: this.requests, errors: this.errors };
  }

  p99Ms(): number | undefined {
    this.advance();
    if (this.requests === 0) return undefined;
    const rank = Math.ceil(this.requests * 0.99);
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.latency[i];
      if (seen >= rank) return upperEdge(i);
    }
    return upperEdge(BUCKETS - 1);
  }

  stats(): WindowStats {
    const { requests, errors } = this.counts();
    const p99Ms = this.p99Ms();
    const stats: WindowStats = { requests, errors, errorRate: requests ? errors / requests : 0 };
    if (p99Ms !== undefined) stats.p99Ms = p99Ms;
    return stats;
  }

  /** Drops the slots that left the window; returns the current slot's index. */
  private advance(): number {
    const current = Math.floor(this.now() / this.slotMs);
    // A clock that went back records into the newest slot rather than reopening an old one.
    if (current <= this.head) return this.head;
    const last = Math.min(current, this.head + SLOTS);
    for (let index = this.head + 1; index <= last; index++) this.clear(index % SLOTS);
    this.head = current;
    return current;
  }

  private clear(slot: number): void {
    this.requests -= this.slotCounts[slot];
    this.errors -= this.slotErrors[slot];
    this.slotCounts[slot] = 0;
    this.slotErrors[slot] = 0;
    const base = slot * BUCKETS;
    for (let i = 0; i < BUCKETS; i++) {
      const n = this.slotLatency[base + i];
      if (n === 0) continue;
      this.latency[i] -= n;
      this.slotLatency[base + i] = 0;
    }
  }
}

function bucketOf(ms: number): number {
  if (!(ms > MIN_MS)) return 0; // NaN and negatives too: a latency is never below zero
  return Math.min(BUCKETS - 1, Math.ceil(Math.log(ms / MIN_MS) / LOG_GROWTH));
}

const upperEdge = (bucket: number): number => MIN_MS * GROWTH ** bucket;
