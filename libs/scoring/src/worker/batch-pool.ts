import { WireTensor } from './worker-protocol';

export interface BatchResult {
  outputs: Record<string, WireTensor>;
  computeMs: number;
  /** The batch's input buffers, back from the instance: the batcher uses them again. */
  inputs: ArrayBuffer[];
}

/**
 * What a dynamic batcher sees of its model's instances, as a Triton scheduler sees its model
 * instances: how many could start a batch now, whether a batch could queue behind a running
 * one, and a way to run one. Which instance runs it, and the core slots that cap how many run
 * at once across models, are the pool's business; the batcher only decides what to cut.
 */
export interface BatchPool {
  /** False once no instance is left and none can be started: queued work must fail. */
  readonly hasCapacity: boolean;

  /** Live idle instances that may start a batch now: 0 when none is idle or no core slot is free. */
  idleCount(): number;

  /** Whether a running instance has room for one more batch queued behind its current one. */
  canQueueBehind(): boolean;

  /**
   * Runs a batch on an idle instance when idleCount() > 0, else queues it behind a running one
   * (canQueueBehind() must be true). A batch whose instance dies fails with WorkerCrashedError.
   */
  run(feeds: Record<string, WireTensor>): Promise<BatchResult>;

  /** `listener` runs whenever an instance or a core slot may have become free. */
  onAvailable(listener: () => void): () => void;
}
