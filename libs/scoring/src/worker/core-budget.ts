/**
 * Caps how many model instances run at once across all models. onnxruntime threads busy beyond
 * the core count starve the event loop (measured: 10-20 ms stalls), so the engine never has more
 * instances running than this budget, whatever the models' instance counts. Only instance pools
 * take and give back slots: a pool owns one per busy instance (see InstancePool), and one per
 * instance it is starting beside traffic (`take`).
 */
export class CoreBudget {
  private used = 0;
  private readonly waiters = new Set<() => void>();
  /** `take` calls waiting for a slot, first come first served, ahead of the pools. */
  private readonly reservations: (() => void)[] = [];

  constructor(readonly slots: number) {}

  get hasFree(): boolean {
    return this.used < this.slots;
  }

  /** Slots taken now; 0 whenever no instance of any model has a batch. */
  get inUse(): number {
    return this.used;
  }

  acquire(): void {
    this.used++;
  }

  /**
   * Resolves once a slot is held for the caller. A caller that has to wait is served ahead of
   * the pools: a slot given back passes straight to it, so a busy engine cannot starve it.
   */
  take(): Promise<void> {
    if (this.used < this.slots && this.reservations.length === 0) {
      this.used++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.reservations.push(resolve));
  }

  release(): void {
    const next = this.reservations.shift();
    if (next) {
      next(); // the slot stays in use, now held by the waiting `take`
      return;
    }
    this.used--;
    for (const wake of this.waiters) wake();
  }

  /** `wake` runs after every release, so a pool whose batcher found no slot can try again. */
  subscribe(wake: () => void): () => void {
    this.waiters.add(wake);
    return () => this.waiters.delete(wake);
  }
}
