import { Logger } from '@nestjs/common';
import { ResolvedModelOptions } from '../model-options';
import { ModelMetadata } from '../tensor-types';
import { BatchPool, BatchResult } from './batch-pool';
import { CoreBudget } from './core-budget';
import { InstanceReady, ModelInstance } from './model-instance';
import { ThreadReserve } from './thread-reserve';
import { WireTensor } from './worker-protocol';

/**
 * The instances of one model. Written here rather than taken from a pool library (piscina):
 * the dynamic batcher must see which instances are idle, so that rows keep accumulating into a
 * larger batch while every instance is busy instead of queueing inside the pool; each instance
 * warms up before it counts as ready; and a dead instance fails its own batch and is replaced.
 *
 * Core slots are owned by instances: one is taken when an idle instance is given a batch and
 * given back exactly once, when that instance has answered its last batch or has died. A dead
 * instance is never offered as idle, so no batch (and no slot) goes to a thread that is gone.
 */
export class InstancePool implements BatchPool {
  private readonly logger = new Logger(InstancePool.name);
  private readonly instances: ModelInstance[] = [];
  private readonly ready = new Set<ModelInstance>();
  /** Instances holding a core slot: those with a batch running or queued. */
  private readonly holdingSlot = new Set<ModelInstance>();
  private readonly listeners = new Set<() => void>();
  private readonly unsubscribeBudget: () => void;
  private closed = false;

  constructor(
    private readonly options: ResolvedModelOptions,
    private readonly onRestart: () => void,
    /** Shared by every model's pool; a slot freed by any of them may let this one run. */
    readonly budget: CoreBudget,
    /** Where instances get their threads and give them back (shared by every model's pool). */
    private readonly threads: ThreadReserve,
  ) {
    this.unsubscribeBudget = budget.subscribe(() => this.notify());
  }

  /**
   * Starts every instance (all at once, or one after another with `staggeredStart`) and resolves
   * when all are warm; any failure stops them all. A staggered start (a version loaded beside
   * traffic) runs one starting thread at a time beside the serving ones, holding no core slot:
   * serving batches keep every slot. (Holding a slot while an instance starts was measured worse
   * under bench:swap: the serving models then shared one slot for the whole start.)
   */
  async start(): Promise<{ metadata: ModelMetadata; provider: string }> {
    try {
      const readies: InstanceReady[] = [];
      if (this.options.staggeredStart) {
        for (let i = 0; i < this.options.instances; i++) {
          const instance = this.spawn();
          this.instances.push(instance);
          readies.push(await instance.ready);
        }
      } else {
        for (let i = 0; i < this.options.instances; i++) this.instances.push(this.spawn());
        readies.push(...(await Promise.all(this.instances.map((instance) => instance.ready))));
      }
      const first = readies[0];
      this.logStart(first, readies);
      return { metadata: first.metadata, provider: first.provider };
    } catch (error) {
      // Terminating a worker inside onnxruntime's run() aborts the whole process (seen with
      // onnxruntime-node 1.30), so let every instance finish its warm-up before closing.
      await Promise.allSettled(this.instances.map((instance) => instance.ready));
      await this.close();
      throw error;
    }
  }

  idleCount(): number {
    if (!this.budget.hasFree) return 0;
    let n = 0;
    for (const instance of this.ready) if (isIdle(instance)) n++;
    return n;
  }

  canQueueBehind(): boolean {
    return this.withRoom() !== undefined;
  }

  run(feeds: Record<string, WireTensor>): Promise<BatchResult> {
    const idle = this.budget.hasFree ? this.idle() : undefined;
    const instance = idle ?? this.withRoom();
    if (!instance)
      return Promise.reject(new Error(`model ${this.options.id}: no instance can take a batch`));
    if (idle) {
      this.budget.acquire();
      this.holdingSlot.add(idle);
    }
    return instance.run(feeds);
  }

  onAvailable(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** False once every instance has died and none could be replaced: queued work must fail. */
  get hasCapacity(): boolean {
    return this.instances.length > 0;
  }

  /** How each instance runs its session: threads, providers, rows per run. */
  get session(): ResolvedModelOptions['session'] {
    return this.options.session;
  }

  /** For tests and diagnostics: the live instances. */
  get live(): readonly ModelInstance[] {
    return this.instances;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribeBudget();
    this.listeners.clear();
    this.ready.clear();
    await Promise.all(this.instances.splice(0).map((instance) => instance.close()));
    // Callers drain first, so nothing should hold a slot; if anything does, it is not lost.
    for (const instance of [...this.holdingSlot]) this.releaseSlot(instance);
  }

  /** A live, warm instance with no batch. */
  private idle(): ModelInstance | undefined {
    for (const instance of this.ready) if (isIdle(instance)) return instance;
    return undefined;
  }

  /** A live running instance with room for one more batch queued behind the current one. */
  private withRoom(): ModelInstance | undefined {
    for (const instance of this.ready)
      if (instance.isAlive && instance.load > 0 && instance.hasRoom) return instance;
    return undefined;
  }

  private notify(): void {
    for (const listener of this.listeners) listener();
  }

  /** Gives back `instance`'s slot if it holds one; the budget then wakes every pool. */
  private releaseSlot(instance: ModelInstance): boolean {
    if (!this.holdingSlot.delete(instance)) return false;
    this.budget.release();
    return true;
  }

  private spawn(): ModelInstance {
    const instance = new ModelInstance(
      this.options.id,
      {
        file: this.options.file,
        session: this.options.session,
        warmup: this.options.warmup,
      },
      this.threads,
      (dead, error) => this.replace(dead, error),
      (idle) => {
        if (!this.releaseSlot(idle)) this.notify();
      },
    );
    instance.ready.then(
      () => {
        if (this.closed || !instance.isAlive) return;
        this.ready.add(instance);
        this.notify();
      },
      () => undefined,
    );
    return instance;
  }

  private replace(dead: ModelInstance, error: Error): void {
    // Out of the ready set before its slot wakes anyone, so no batcher sees it as idle.
    this.ready.delete(dead);
    this.releaseSlot(dead);
    const index = this.instances.indexOf(dead);
    if (this.closed || index < 0) return;
    this.logger.error(
      `model ${this.options.id}: worker ${dead.threadId} died (${error.message}); starting a replacement`,
    );
    this.onRestart();
    const replacement = this.spawn();
    this.instances[index] = replacement;
    replacement.ready.catch((startError: Error) => {
      this.logger.error(
        `model ${this.options.id}: replacement worker failed to start: ${startError.message}`,
      );
      this.instances.splice(this.instances.indexOf(replacement), 1);
      this.notify();
    });
  }

  private logStart(first: InstanceReady, all: InstanceReady[]): void {
    const { id, instances, session } = this.options;
    const skipped = first.skipped.length > 0 ? `; unavailable: ${first.skipped.join('; ')}` : '';
    const warmup = Math.max(...all.map((r) => r.warmupMs)).toFixed(0);
    const runs = session.maxRunRows > 0 ? `, runs of at most ${session.maxRunRows} rows` : '';
    this.logger.log(
      `model ${id}: ${instances} instance(s) x ${session.intraOpThreads} intra-op thread(s)${runs} on ${first.provider} ` +
        `(asked for ${session.executionProviders.join(' > ')}${skipped}), warm-up ${warmup} ms`,
    );
  }
}

function isIdle(instance: ModelInstance): boolean {
  return instance.isAlive && instance.load === 0;
}
