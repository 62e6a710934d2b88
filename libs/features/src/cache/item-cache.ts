import { LRUCache } from 'lru-cache';
import { FeatureRow } from '../feature-row';

export interface CachedItem {
  /** Parsed row, ready for the tensor builder; undefined when the store has no such item. */
  row: FeatureRow | undefined;
  /** `_ts` of the stored row (0 if it had none). */
  ts: number;
  /** Approximate size: the length of the stored blob. */
  bytes: number;
}

export interface ItemCacheOptions {
  maxEntries: number;
  maxBytes: number;
  ttlMs: number;
}

/**
 * In-process item cache (LRU, bounded by entries and bytes, with TTL) in front of Redis. A hit
 * costs a map lookup: rows are cached parsed. Updates from Kafka refresh cached rows in place,
 * and a row read from Redis is not cached when an update newer than it has been seen, so a read
 * racing an update cannot pin a stale row until its TTL.
 */
export class ItemCache {
  private readonly lru: LRUCache<string, CachedItem>;
  /** Newest update time seen per id, kept a while so racing reads can be recognised as stale. */
  private readonly updatedAt: LRUCache<string, number>;

  constructor(options: ItemCacheOptions, onEvict: () => void = () => undefined) {
    this.lru = new LRUCache<string, CachedItem>({
      max: options.maxEntries,
      maxSize: options.maxBytes,
      sizeCalculation: (item) => Math.max(1, item.bytes),
      ttl: options.ttlMs,
      dispose: (_item, _id, reason) => {
        if (reason === 'evict') onEvict();
      },
    });
    this.updatedAt = new LRUCache<string, number>({ max: 100_000, ttl: 5 * 60_000 });
  }

  get(id: string): CachedItem | undefined {
    return this.lru.get(id);
  }

  /** Caches a row read from the store unless a newer version is already known. */
  fill(id: string, item: CachedItem): boolean {
    const seen = this.updatedAt.get(id) ?? 0;
    const cached = this.lru.peek(id);
    if (seen > item.ts || (cached && cached.ts > item.ts)) return false;
    this.lru.set(id, item);
    return true;
  }

  /** Applies an update's fields to a cached row if the update is newer; returns whether it did. */
  applyUpdate(id: string, fields: FeatureRow, ts: number): boolean {
    if (ts > (this.updatedAt.get(id) ?? 0)) this.updatedAt.set(id, ts);
    const cached = this.lru.peek(id);
    if (!cached || cached.ts >= ts) return false;
    const row = { ...cached.row, ...fields };
    this.lru.set(id, { row, ts, bytes: JSON.stringify(row).length });
    return true;
  }

  invalidate(id: string): void {
    this.lru.delete(id);
  }

  clear(): void {
    this.lru.clear();
  }

  get size(): number {
    return this.lru.size;
  }

  get bytes(): number {
    return this.lru.calculatedSize;
  }
}
