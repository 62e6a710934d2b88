/**
 * Keeps a burst of continuations from holding the event loop for one long turn. Many requests'
 * work often becomes ready at once (one Redis reply with many users' rows, one worker message with
 * many requests' scores); run in the turn that brought them, their work adds up to tens of
 * milliseconds in which no timer fires and no other socket is read. At its yield points a request
 * asks `pass()`: within `budgetMs` of the first ask of this loop turn it goes on at once; past it
 * (or while others wait) it waits its turn, and the waiting go on one per loop turn (each in a
 * setImmediate: the first at the end of the turn that held it back, the next ones each in a turn
 * of its own), in the order they asked, so timers and I/O run between them. A budget of 0 never
 * holds anyone back.
 *
 * The slice counts from the first ask of a turn (work before it in that turn is not seen), and one
 * step runs whole once started: the slicer bounds how many requests' steps share a turn, not how
 * long one step is.
 */
export class LoopSlicer {
  private turnStartedAt = -1;
  private readonly waiting: (() => void)[] = [];
  private head = 0;
  private stepping = false;

  constructor(private readonly budgetMs: number) {}

  /** Undefined: go on now. A promise: resolves in a later loop turn, in asking order. */
  pass(): Promise<void> | undefined {
    if (this.budgetMs <= 0) return undefined;
    if (this.head === this.waiting.length) {
      const now = performance.now();
      if (this.turnStartedAt < 0) {
        this.turnStartedAt = now;
        setImmediate(this.turnEnded);
        return undefined;
      }
      if (now - this.turnStartedAt < this.budgetMs) return undefined;
    }
    return new Promise<void>((resolve) => {
      this.waiting.push(resolve);
      if (!this.stepping) {
        this.stepping = true;
        setImmediate(this.step);
      }
    });
  }

  /** Continuations waiting for a turn. */
  get queued(): number {
    return this.waiting.length - this.head;
  }

  private readonly turnEnded = (): void => {
    this.turnStartedAt = -1;
  };

  private readonly step = (): void => {
    const next = this.waiting[this.head];
    this.waiting[this.head++] = undefined as unknown as () => void;
    if (this.head === this.waiting.length) {
      this.waiting.length = 0;
      this.head = 0;
      this.stepping = false;
    } else setImmediate(this.step);
    next();
  };
}
