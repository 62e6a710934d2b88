import { fnv1a32 } from '@app/common';
import { FeatureEntity } from '../feature-row';

/**
 * One string key per entity: `<prefix><entity>:<id>` (default prefix `rk:`). With slot
 * buckets N > 0 the key carries a Redis Cluster hash tag, `<prefix><entity>:{<b>}:<id>` with
 * b = fnv1a32(id) mod N, so a request's keys fall in at most N slots and the store needs at
 * most N MGETs instead of one per key (a Cluster refuses an MGET across slots).
 */
export class RedisKeys {
  constructor(
    private readonly prefix: string,
    private readonly slotBuckets = 0,
  ) {}

  key(entity: FeatureEntity, id: string): string {
    if (this.slotBuckets === 0) return `${this.prefix}${entity}:${id}`;
    return `${this.prefix}${entity}:{${fnv1a32(id) % this.slotBuckets}}:${id}`;
  }
}
