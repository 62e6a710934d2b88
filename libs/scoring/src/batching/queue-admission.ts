import { OverloadedError, RequestTooLargeError } from '@app/common';
import { BatchingOptions } from '../model-options';
import { WireTensor } from '../worker/worker-protocol';

export type RejectReason =
  'overloaded' | 'queue_wait' | 'too_large' | 'deadline' | 'worker_crashed' | 'run_failed';

export interface BatcherEvents {
  dispatched(rows: number, queueMs: number[]): void;
  completed(rows: number, computeMs: number, outputs: Record<string, WireTensor>): void;
  rejected(reason: RejectReason, requests: number): void;
}

/** A model's queue as its admission rules read it. */
export interface QueueState {
  readonly modelId: string;
  readonly options: BatchingOptions;
  /** Rows waiting to be dispatched. */
  readonly queuedRows: number;
  /** How long the oldest waiting rows have waited past their batch delay, ms (0 with none). */
  oldestWaitMs(): number;
}

/**
 * Why a model's queue cannot take `rows` more now, or undefined when it can; a refusal is counted
 * through `events`. More rows than the queue ever holds is RequestTooLargeError (never retry);
 * a queue too full for them, or (with maxQueueWaitMs) one whose oldest rows have waited past
 * that bound, is OverloadedError (try again): the queue is then bounded by the wait it means,
 * not only by its rows.
 */
export function queueRefusal(
  queue: QueueState,
  rows: number,
  events: BatcherEvents,
): Error | undefined {
  const { modelId, options, queuedRows } = queue;
  const { maxQueueRows, maxQueueWaitMs } = options;
  // More rows than the queue ever holds: waiting would not help, so not OverloadedError.
  if (rows > maxQueueRows) {
    events.rejected('too_large', 1);
    return new RequestTooLargeError(
      `model ${modelId}: a request of ${rows} rows can never be queued: maxQueueRows is ${maxQueueRows}`,
      modelId,
      rows,
      maxQueueRows,
    );
  }
  if (queuedRows + rows > maxQueueRows) {
    events.rejected('overloaded', 1);
    return new OverloadedError(
      `model ${modelId}: ${queuedRows} rows queued, ${rows} more would pass ${maxQueueRows}`,
    );
  }
  const waited = maxQueueWaitMs > 0 ? queue.oldestWaitMs() : 0;
  if (waited > maxQueueWaitMs) {
    events.rejected('queue_wait', 1);
    return new OverloadedError(
      `model ${modelId}: the oldest queued rows have waited ${Math.round(waited)} ms, past maxQueueWaitMs ${maxQueueWaitMs}`,
    );
  }
  return undefined;
}
