import { PendingRequest } from './pending-request';

/** Below this many gone entries a pass over the array is not worth it (each may hold feeds). */
const MIN_COMPACT = 32;

/**
 * The batcher's FIFO of requests with rows still to dispatch. A request settled while queued
 * (deadline, failed batch) is only counted here and skipped when it reaches the head; the array
 * is compacted once half of it is dead. So taking from the head and dropping any number of
 * requests from the middle cost O(1) amortised each: thousands of requests whose deadline
 * passes at once expire in linear time, not with one search and splice each.
 */
export class RequestQueue {
  /** Entries before the head are cleared so their feeds can be collected. */
  private items: (PendingRequest | undefined)[] = [];
  /** Index of the head; entries before it are gone. */
  private head = 0;
  /** Settled entries at or after the head. */
  private dead = 0;

  /** Requests still waiting. */
  get length(): number {
    return this.items.length - this.head - this.dead;
  }

  push(request: PendingRequest): void {
    this.items.push(request);
  }

  /** The oldest request still waiting. */
  first(): PendingRequest | undefined {
    while (this.head < this.items.length && this.items[this.head]!.settled) {
      this.items[this.head++] = undefined;
      this.dead--;
    }
    return this.items[this.head];
  }

  /** Removes the head, once all its rows are dispatched. */
  shift(): void {
    this.items[this.head++] = undefined;
    this.compact();
  }

  /** Notes that a request still queued was settled elsewhere; it is skipped from now on. */
  settledInPlace(): void {
    this.dead++;
    this.compact();
  }

  /** Empties the queue, returning the requests still waiting. */
  drain(): PendingRequest[] {
    const waiting: PendingRequest[] = [];
    for (let i = this.head; i < this.items.length; i++) {
      const request = this.items[i]!;
      if (!request.settled) waiting.push(request);
    }
    this.items = [];
    this.head = 0;
    this.dead = 0;
    return waiting;
  }

  private compact(): void {
    const gone = this.head + this.dead;
    if (gone < MIN_COMPACT || gone * 2 < this.items.length) return;
    let at = 0;
    for (let i = this.head; i < this.items.length; i++) {
      const request = this.items[i]!;
      if (!request.settled) this.items[at++] = request;
    }
    this.items.length = at;
    this.head = 0;
    this.dead = 0;
  }
}
