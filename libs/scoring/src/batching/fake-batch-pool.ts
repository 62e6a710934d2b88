import { BatchingOptions } from '../model-options';
import { elementCount, InputFeeds } from '../tensor-types';
import { BatchPool, BatchResult } from '../worker/batch-pool';
import { WireTensor } from '../worker/worker-protocol';

/** One batch the batcher handed to the fake pool; the spec decides when and how it ends. */
export interface FakeBatch {
  instance: number;
  rows: number;
  /** Queued behind a running batch rather than started on an idle instance. */
  behind: boolean;
  feeds: Record<string, WireTensor>;
  done: boolean;
  /** Answers with each input copied to an output of the same name (the identity model). */
  succeed(): void;
  fail(error: Error): void;
}

/**
 * A BatchPool with no workers, for the batcher's policy specs: instances are counters of
 * batches (one running plus one queued behind at most, like ModelInstance), core slots are
 * taken and given back per instance like InstancePool, and batches end only when the spec says.
 */
export class FakeBatchPool implements BatchPool {
  readonly batches: FakeBatch[] = [];
  hasCapacity = true;
  /** Calls of idleCount() and canQueueBehind(): the batcher's work, counted for linearity. */
  polls = 0;
  private readonly loads: number[];
  private slotsInUse = 0;
  private readonly listeners = new Set<() => void>();

  constructor(
    instances: number,
    private readonly slots = instances,
  ) {
    this.loads = new Array<number>(instances).fill(0);
  }

  get inUse(): number {
    return this.slotsInUse;
  }

  /** Batches not yet answered. */
  get running(): FakeBatch[] {
    return this.batches.filter((b) => !b.done);
  }

  idleCount(): number {
    this.polls++;
    return this.slotsInUse < this.slots ? this.loads.filter((l) => l === 0).length : 0;
  }

  canQueueBehind(): boolean {
    this.polls++;
    return this.loads.some((l) => l === 1);
  }

  run(feeds: Record<string, WireTensor>): Promise<BatchResult> {
    let instance = this.slotsInUse < this.slots ? this.loads.indexOf(0) : -1;
    const behind = instance < 0;
    if (behind) instance = this.loads.indexOf(1);
    if (instance < 0) throw new Error('the batcher ran a batch with no instance free');
    if (!behind) this.slotsInUse++;
    this.loads[instance]++;
    return new Promise<BatchResult>((resolve, reject) => {
      const rows = Object.values(feeds)[0].dims[0];
      const end = (then: () => void) => {
        if (batch.done) throw new Error('batch already ended');
        batch.done = true;
        then();
        if (--this.loads[instance] === 0) {
          this.slotsInUse--;
          for (const listener of this.listeners) listener();
        }
      };
      const batch: FakeBatch = {
        instance,
        rows,
        behind,
        feeds,
        done: false,
        succeed: () => end(() => resolve({ outputs: identity(feeds), computeMs: 1, inputs: [] })),
        fail: (error) => end(() => reject(error)),
      };
      this.batches.push(batch);
    });
  }

  onAvailable(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Wakes the batcher as the real pool does when an instance starts or is lost. */
  notify(): void {
    for (const listener of this.listeners) listener();
  }
}

function identity(feeds: Record<string, WireTensor>): Record<string, WireTensor> {
  const outputs: Record<string, WireTensor> = {};
  for (const [name, { buffer, dims }] of Object.entries(feeds))
    outputs[name] = {
      dtype: 'float32',
      buffer: buffer.slice(0, elementCount(dims) * 4),
      dims: [...dims],
    };
  return outputs;
}

/** `rows` rows of one float32 column `x` holding from, from + 1, ...: each row names itself. */
export function numberedFeeds(rows: number, from = 0): InputFeeds {
  const data = new Float32Array(rows);
  for (let i = 0; i < rows; i++) data[i] = from + i;
  return { x: { dtype: 'float32', data, dims: [rows, 1] } };
}

/** The rows a batch carries, by their numbers. */
export function batchRows(batch: FakeBatch): number[] {
  const { buffer, dims } = batch.feeds.x;
  return Array.from(new Float32Array(buffer, 0, elementCount(dims)));
}

/** Lets promise callbacks (batch results, rejections) run. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

/**
 * Batching options for policy specs: batches of at most 100 rows, a queue delay that never runs
 * out (a spec cuts batches by size or with fake timers), and `overrides`.
 */
export function specBatching(overrides: Partial<BatchingOptions> = {}): BatchingOptions {
  return {
    enabled: true,
    maxBatchRows: 100,
    maxQueueDelayMicros: 600_000_000,
    preferredBatchRows: [],
    maxQueueRows: 100_000,
    maxQueueWaitMs: 0,
    ...overrides,
  };
}
