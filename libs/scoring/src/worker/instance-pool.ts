import { Logger } from '@nestjs/common';
import { CoreBudget } from '../batching/core-budget';
import { ResolvedModelOptions } from '../model-options';
import { ModelMetadata } from '../tensor-types';
import { InstanceReady, ModelInstance } from './model-instance';

/**
 * The instances of one model. Written here rather than taken from a pool library (piscina):
 * the dynamic batcher must see which instances are idle, so that rows keep accumulating into a
 * larger batch while every instance is busy instead of queueing inside the pool; each instance
 * warms up before it counts as ready; and a dead instance fails its own batch and is replaced.
 */
export class InstancePool {
  private readonly logger = new Logger(InstancePool.name);
  private readonly instances: ModelInstance[] = [];
  private readonly ready = new Set<ModelInstance>();
  private closed = false;

  constructor(
    private readonly options: ResolvedModelOptions,
    /** Called whenever an instance may have become available. */
    private readonly onAvailable: () => void,
    private readonly onRestart: () => void,
    /** Its slot is given back whenever an instance runs out of batches. */
    private readonly budget: CoreBudget,
  ) {}

  /** Starts every instance and resolves when all are warm; any failure stops them all. */
  async start(): Promise<{ metadata: ModelMetadata; provider: string }> {
    for (let i = 0; i < this.options.instances; i++) this.instances.push(this.spawn());
    try {
      const readies = await Promise.all(this.instances.map((instance) => instance.ready));
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

  /** An instance that is warm and has no batch. */
  idle(): ModelInstance | undefined {
    for (const instance of this.ready) if (instance.load === 0) return instance;
    return undefined;
  }

  idleCount(): number {
    let n = 0;
    for (const instance of this.ready) if (instance.load === 0) n++;
    return n;
  }

  /** A running instance with room for one more batch queued behind the current one. */
  withRoom(): ModelInstance | undefined {
    for (const instance of this.ready) if (instance.load > 0 && instance.hasRoom) return instance;
    return undefined;
  }

  /** False once every instance has died and none could be replaced: queued work must fail. */
  get hasCapacity(): boolean {
    return this.instances.length > 0;
  }

  /** For tests and diagnostics: the live instances. */
  get live(): readonly ModelInstance[] {
    return this.instances;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.ready.clear();
    await Promise.all(this.instances.splice(0).map((instance) => instance.close()));
  }

  private spawn(): ModelInstance {
    const instance = new ModelInstance(
      this.options.id,
      { file: this.options.file, session: this.options.session, warmup: this.options.warmup },
      (dead, error) => this.replace(dead, error),
      () => {
        this.budget.release();
        this.onAvailable();
      },
    );
    instance.ready.then(
      () => {
        if (this.closed || !instance.isAlive) return;
        this.ready.add(instance);
        this.onAvailable();
      },
      () => undefined,
    );
    return instance;
  }

  private replace(dead: ModelInstance, error: Error): void {
    this.ready.delete(dead);
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
      this.onAvailable();
    });
  }

  private logStart(first: InstanceReady, all: InstanceReady[]): void {
    const { id, instances, session } = this.options;
    const skipped = first.skipped.length > 0 ? `; unavailable: ${first.skipped.join('; ')}` : '';
    const warmup = Math.max(...all.map((r) => r.warmupMs)).toFixed(0);
    this.logger.log(
      `model ${id}: ${instances} instance(s) x ${session.intraOpThreads} intra-op thread(s) on ${first.provider} ` +
        `(asked for ${session.executionProviders.join(' > ')}${skipped}), warm-up ${warmup} ms`,
    );
  }
}
