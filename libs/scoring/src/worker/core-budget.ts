/**
 * Caps how many model instances run at once across all models. onnxruntime threads busy beyond
 * the core count starve the event loop (measured: 10-20 ms stalls), so the engine never has more
 * instances running than this budget, whatever the models' instance counts. Only instance pools
 * take and give back slots: a pool owns one per busy instance (see InstancePool).
 */
export class CoreBudget {
  private used = 0;
  private readonly waiters = new Set<() => void>();

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

  release(): void {
    this.used--;
    for (const wake of this.waiters) wake();
  }

  /** `wake` runs after every release, so a pool whose batcher found no slot can try again. */
  subscribe(wake: () => void): () => void {
    this.waiters.add(wake);
    return () => this.waiters.delete(wake);
  }
}
