import type { EachBatchPayload } from 'kafkajs';
import { ItemCache } from '../cache/item-cache';
import { FeaturesMetrics } from '../features.metrics';
import { parseFeatureUpdate } from './feature-update';

/**
 * The cache side of real-time updates (one consumer group per replica, so every replica sees every
 * update): an item update is merged into this process's cached row if it is newer, and its time is
 * remembered so that a Redis read racing it is not cached. Users are not cached; refused messages
 * are the writer's business (it dead-letters them), so both are skipped here.
 */
export class FeatureCacheRefresher {
  constructor(
    private readonly cache: ItemCache,
    private readonly metrics: FeaturesMetrics,
  ) {}

  /** kafkajs `eachBatch` handler: synchronous per message, so the batch resolves as a whole. */
  readonly eachBatch = async ({ batch }: EachBatchPayload): Promise<void> => {
    let refreshed = 0;
    for (const message of batch.messages) {
      const parsed = parseFeatureUpdate(message.value, message.timestamp);
      if (!parsed.ok || parsed.update.entity !== 'item') continue;
      const { id, fields, timestamp } = parsed.update;
      // The writer skips an update left with no fields, so the cache does too.
      if (Object.keys(fields).length === 0) continue;
      if (this.cache.applyUpdate(id, fields, timestamp)) refreshed++;
    }
    if (refreshed > 0) this.metrics.updates.inc({ result: 'cache_refreshed' }, refreshed);
  };
}
