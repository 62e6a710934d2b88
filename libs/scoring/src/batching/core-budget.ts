/**
 * Caps how many model instances run at once across all models. onnxruntime threads busy beyond
 * the core count starve the event loop (measured: 10-20 ms stalls), so the engine never has more
 * instances running than this budget, whatever the models' instance counts. A slot is taken when
 * an idle instance gets a batch and given back when it has none left.
 */
export class CoreBudget {
  private inUse = 0;
  private readonly waiters = new Set<() => void>();

  constructor(readonly slots: number) {}

  get hasFree(): boolean {
    return this.inUse < this.slots;
  }

  acquire(): void {
    this.inUse++;
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
