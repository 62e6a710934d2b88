import { LRUCache } from 'lru-cache';
import { copyMemo, FeatureRow, ItemHolder, ItemMemos } from '../feature-row';
import { HeldRow, RowLru } from './row-lru';

/** A row read from the store, as handed to `fill`. */
export interface CachedItem {
  /** Parsed row, ready for the tensor builder; undefined when the store has no such item. */
  readonly row: FeatureRow | undefined;
  /** `_ts` of the stored row (0 if it had none). */
  ts: number;
  /** Approximate size: the length of the stored blob. */
  bytes: number;
}

export interface ItemCacheOptions {
  maxEntries: number;
  maxBytes: number;
  ttlMs: number;
  /** Ids cached as absent, in an LRU of their own (0: absent ids are not cached). */
  maxNegativeEntries?: number;
  /** Monotonic milliseconds (default `performance`); a fake clock for unit specs. */
  clock?: { now(): number };
}

/** Update times remembered per id (each for UPDATE_MEMORY_MS at most). */
export const UPDATE_MEMORY_MAX_ENTRIES = 100_000;
export const UPDATE_MEMORY_MS = 5 * 60_000;
const DEFAULT_MAX_NEGATIVE_ENTRIES = 100_000;

/** A row as the cache holds it: also the holder of its consumers' memo (see ItemHolder). */
export type CachedEntry = CachedItem & ItemHolder;

interface SeenUpdate {
  ts: number;
  /** Clock time the update was seen here. */
  at: number;
}

/**
 * In-process item cache in front of Redis. Rows are cached parsed, so a hit is a map lookup.
 *
 * - Rows: an LRU bounded by entries and bytes, with TTL (RowLru: expiry and links in the entry
 *   itself, so a hit reads one object beside the map). An update merged into a cached row
 *   keeps the entry's original expiry, so a row updated often is still re-read from Redis once a
 *   TTL (and cannot live on as a stale merge of a row Redis no longer holds).
 * - Ids known to be absent: an LRU of their own (`maxNegativeEntries`), so a flood of unknown ids
 *   cannot evict hot rows. An update for such an id drops the entry instead of inventing a row:
 *   the id may be absent because its key is corrupt or of another type, which the writer refuses,
 *   so only a read says what Redis holds.
 * - Update times: a read that raced an update must not pin the row as it was before it. The
 *   newest update time per id is remembered (LRU of UPDATE_MEMORY_MAX_ENTRIES, each for
 *   UPDATE_MEMORY_MS) and a row older than it is not cached. Once an id is forgotten (evicted for
 *   room, or older than UPDATE_MEMORY_MS) its update time is unknown, so a fill is then refused
 *   when its read started before the newest update forgotten so far (a high-water mark of the
 *   clock times forgotten updates were seen at, and `now - UPDATE_MEMORY_MS` for expired ones):
 *   a read that started after an update was seen cannot return the row from before it, unless
 *   the writer (maybe another replica) is that far behind, which the memory's length bounds.
 *   Forgetting thus only refuses replies that were in flight for longer than the memory holds
 *   anything; rows with an old `_ts` that were never updated stay cacheable.
 */
export class ItemCache {
  private readonly rows: RowLru;
  private readonly ttlMs: number;
  private readonly absent?: LRUCache<string, CachedEntry>;
  private readonly updatedAt: LRUCache<string, SeenUpdate>;
  private readonly clock: { now(): number };
  /** Newest clock time at which an update that has since been evicted from memory was seen. */
  private evictedSeenAt = -Infinity;

  constructor(options: ItemCacheOptions, onEvict: () => void = () => undefined) {
    this.clock = options.clock ?? performance;
    const timing = { perf: this.clock, ttlResolution: options.clock ? 0 : 1 };
    this.ttlMs = options.ttlMs;
    this.rows = new RowLru(options.maxEntries, options.maxBytes, onEvict);
    const maxNegative = options.maxNegativeEntries ?? DEFAULT_MAX_NEGATIVE_ENTRIES;
    if (maxNegative > 0)
      this.absent = new LRUCache<string, CachedEntry>({
        ...timing,
        max: maxNegative,
        ttl: options.ttlMs,
      });
    this.updatedAt = new LRUCache<string, SeenUpdate>({
      ...timing,
      max: UPDATE_MEMORY_MAX_ENTRIES,
      ttl: UPDATE_MEMORY_MS,
      dispose: (seen, _id, reason) => {
        if (reason === 'evict') this.evictedSeenAt = Math.max(this.evictedSeenAt, seen.at);
      },
    });
  }

  /** The clock reads are stamped with: take it before sending a read whose rows `fill` caches. */
  now(): number {
    return this.clock.now();
  }

  /** The rows cached now (not those cached as absent), without touching their recency. */
  *heldRows(): Iterable<[string, FeatureRow]> {
    const now = this.clock.now();
    for (const { id, row, expiresAt } of this.rows.entries())
      if (row !== undefined && expiresAt > now) yield [id, row];
  }

  /**
   * The cached row of `id` (or its known absence); undefined when not cached or stale. `now`: the
   * clock read once for a whole batch of lookups.
   *
   * A hit reads the entry alone; recency is LRU, refreshed as RowLru.touch says.
   */
  get(id: string, now = this.clock.now()): CachedEntry | undefined {
    const held = this.rows.peek(id);
    if (held !== undefined) {
      if (held.expiresAt <= now) {
        this.rows.delete(id);
        return this.absent?.get(id);
      }
      this.rows.touch(held);
      return held;
    }
    return this.absent?.get(id);
  }

  /**
   * Looks up every id of `ids` as `get` would (`now`: the clock read once for them all): for a
   * hit, its row, its entry (the holder) and the entry's memo (as copyMemo gives it) go to row
   * `i` of `items`, `holders` and `memos`. Returns the positions of the misses, in order. A row
   * the index holds (see ItemIdIndex; all ids are found first, in one `findAll`) is answered from
   * its record without a read of the Map or of the entry; any other id, and an expired row, goes
   * through `get`.
   */
  lookup(
    ids: readonly string[],
    now: number,
    items: (FeatureRow | undefined)[],
    holders: (ItemHolder | undefined)[],
    memos: ItemMemos,
  ): number[] {
    const misses: number[] = [];
    const { index } = this.rows;
    const found = index.findAll(ids);
    for (let i = 0; i < ids.length; i++) {
      const rec = found[i];
      if (rec >= 0 && index.expiresAt(rec) > now) {
        const held = index.handOut(rec, i, items, holders, memos);
        this.rows.touchFromIndex(held as HeldRow, index.tickAt(rec));
        continue;
      }
      const hit = this.get(ids[i], now);
      if (hit) {
        items[i] = hit.row;
        holders[i] = hit;
        // The entry was just read: its memo is in the same memory.
        copyMemo(memos, i, hit);
      } else misses.push(i);
    }
    return misses;
  }

  /**
   * Caches a row read from the store (by a read sent at `readStartedAt`) unless a newer version
   * is known, or may have been seen and forgotten since the read started.
   */
  fill(id: string, item: CachedItem, readStartedAt = this.clock.now()): boolean {
    // Both checks, also for a remembered id: it may have been forgotten once and seen again with
    // an older update since.
    if ((this.updatedAt.get(id)?.ts ?? -Infinity) > item.ts) return false;
    if (readStartedAt < this.forgottenUpTo()) return false;
    const cached = this.live(id);
    if (cached && cached.ts > item.ts) return false;
    if (item.row === undefined) {
      if (!this.absent) return false;
      this.rows.delete(id);
      this.absent.set(id, { ...item, memoRow: undefined, memoKey: 0, memoValue: 0 });
    } else {
      this.absent?.delete(id);
      this.rows.set(id, item, this.expiry());
    }
    return true;
  }

  /** Applies an update's fields to a cached row if the update is newer; returns whether it did. */
  applyUpdate(id: string, fields: FeatureRow, ts: number): boolean {
    const seen = this.updatedAt.get(id);
    if (!seen || ts > seen.ts) this.updatedAt.set(id, { ts, at: this.clock.now() });
    if (this.absent?.delete(id)) return false;
    const cached = this.live(id);
    if (!cached || cached.ts >= ts) return false;
    const row = { ...cached.row, ...fields };
    this.rows.set(id, { row, ts, bytes: JSON.stringify(row).length }, cached.expiresAt);
    return true;
  }

  /** The row held for `id` unless it is stale. */
  private live(id: string): HeldRow | undefined {
    const held = this.rows.peek(id);
    return held !== undefined && held.expiresAt > this.clock.now() ? held : undefined;
  }

  /** When a row cached now expires. */
  private expiry(): number {
    return this.ttlMs > 0 ? this.clock.now() + this.ttlMs : Infinity;
  }

  invalidate(id: string): void {
    this.rows.delete(id);
    this.absent?.delete(id);
  }

  /** Drops every cached row and absent id; update times are kept (late reads stay refused). */
  clear(): void {
    this.rows.clear();
    this.absent?.clear();
  }

  /** Rows cached (ids cached as absent are `negativeSize`). */
  get size(): number {
    return this.rows.size;
  }

  get negativeSize(): number {
    return this.absent?.size ?? 0;
  }

  get bytes(): number {
    return this.rows.bytes;
  }

  /** Reads started before this clock time may have raced an update this cache has forgotten. */
  private forgottenUpTo(): number {
    return Math.max(this.evictedSeenAt, this.clock.now() - UPDATE_MEMORY_MS);
  }
}
