/**
 * Hands out event-loop turns one at a time. `next()` resolves in a turn of its own (a
 * setImmediate scheduled from the previous one's), in call order, so work queued behind it runs
 * one piece per loop iteration with timers and socket I/O between the pieces.
 *
 * Why: a model batch that completes tens of small requests at once resolves them all in one
 * tick; each then fuses its scores, selects its top items and writes its answer, and together
 * they held the event loop for one long turn (the event-loop delay's p99 at 64 callers of 100
 * candidates was the length of such a turn). Taking a turn each before that work lets new
 * requests be read, and timers fire, in between.
 */
export class LoopTurns {
  private readonly waiting: (() => void)[] = [];
  private head = 0;
  private scheduled = false;

  next(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.waiting.push(resolve);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.turn);
      }
    });
  }

  private readonly turn = (): void => {
    const resolve = this.waiting[this.head++];
    if (this.head === this.waiting.length) {
      this.waiting.length = 0;
      this.head = 0;
    }
    resolve?.();
    if (this.head < this.waiting.length) setImmediate(this.turn);
    else this.scheduled = false;
  };
}
