import { BatchingOptions } from '../model-options';

/** Below this many rows per batch, splitting across idle instances costs more than it saves. */
export const MIN_SPLIT_ROWS = 256;
/**
 * The share of maxBatchRows that must wait before a batch queues behind a running instance. Was
 * 2 (a full batch left waiting besides the one queued). Alternated in one ranker, 1.5-2.5 s at a
 * time over 24-40 steps (bench:rank's load, 2-core AMD EPYC, 2026-12-06): a quarter, queueing a
 * full batch, gave 1.1-2.6% more rows/s with 100-candidate requests at c=64 and 2.2-2.6% with
 * 3,000 at c=2 and c=4; as adopted (a balanced batch, the example bundle's maxBatchRows 1,536),
 * 4.0% at 100, 6.7% at 3,000 c=2 and 2.1% at c=4. Batches of at most 256 rows (maxBatchRows
 * itself a quarter) lost 13%: it is not smaller batches that help, but threads that do not wait
 * between them.
 */
export const BEHIND_SHARE = 0.25;

/**
 * Rows for the next batch of a DynamicBatcher, 0 for none yet. `queued`: the rows waiting (with
 * batching off, the first request's own); `waitedMicros`: how long the oldest of them has waited;
 * `idle`: instances free to take a batch. With no idle instance, a batch (balanced, at most a full
 * one) queues behind a running one once a quarter of a full batch waits (BEHIND_SHARE): the
 * thread then starts it as it ends the current one, instead of idling until the event loop has
 * taken its answer and sent more. Merging every waiting row into one larger batch saved less than
 * those idle gaps cost.
 */
export function nextBatchSize(
  options: BatchingOptions,
  queued: number,
  waitedMicros: number,
  idle: number,
): number {
  const { enabled, maxBatchRows, maxQueueDelayMicros, preferredBatchRows } = options;
  if (idle === 0)
    return queued >= maxBatchRows * BEHIND_SHARE ? balanced(queued, maxBatchRows, 1) : 0;
  if (!enabled) return balanced(queued, maxBatchRows, idle);
  if (queued >= maxBatchRows || waitedMicros >= maxQueueDelayMicros)
    return balanced(queued, maxBatchRows, idle);
  let preferred = 0;
  for (const size of preferredBatchRows) if (size <= queued && size > preferred) preferred = size;
  return preferred;
}

/** Rows for the next batch: balanced chunks of at most `max`, spread over idle instances. */
function balanced(queued: number, max: number, idle: number): number {
  let chunks = Math.ceil(queued / max);
  if (idle > chunks && queued >= 2 * MIN_SPLIT_ROWS)
    chunks = Math.min(idle, Math.floor(queued / MIN_SPLIT_ROWS));
  return Math.ceil(queued / chunks);
}
