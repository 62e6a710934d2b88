/**
 * Caps how many batches run at once across all models. onnxruntime threads busy beyond the
 * core count starve the event loop (measured: 10-20 ms stalls), so the engine never runs more
 * concurrent batches than this budget, whatever the models' instance counts.
 */
export class CoreBudget {
  private inUse = 0;
  private readonly waiters = new Set<() => void>();

  constructor(readonly slots: number) {}

  tryAcquire(): boolean {
    if (this.inUse >= this.slots) return false;
    this.inUse++;
    return true;
  }

  release(): void {
    this.inUse--;
    for (const wake of this.waiters) wake();
  }

  /** `wake` runs after every release, so a batcher that found no slot can try again. */
  subscribe(wake: () => void): () => void {
    this.waiters.add(wake);
    return () => this.waiters.delete(wake);
  }
}
