import type { FeatureRow } from '../feature-row';
import type { CachedItem } from './item-cache';
import { IndexedHolder } from './indexed-holder';
import { IndexedRow, ItemIdIndex } from './item-id-index';

/** A cached row as held: list links, expiry and recency in the same object as the row. */
export interface HeldRow extends CachedItem, IndexedRow {
  readonly id: string;
  /** Clock time from which the row is stale. */
  readonly expiresAt: number;
  /** The list's tick when the row last moved to its recent end. */
  tick: number;
  /** Toward the least recent end. */
  older: HeldRow | undefined;
  /** Toward the most recent end. */
  newer: HeldRow | undefined;
}

/** A held row: its memo mirrored into the index (IndexedHolder), its list links beside it. */
class Held extends IndexedHolder implements HeldRow {
  older: HeldRow | undefined = undefined;
  newer: HeldRow | undefined = undefined;

  constructor(
    id: string,
    row: FeatureRow | undefined,
    readonly ts: number,
    readonly bytes: number,
    expiresAt: number,
    index: ItemIdIndex,
  ) {
    super(id, row, expiresAt, index);
  }
}

/**
 * The item cache's rows: a map from id to a doubly linked list of HeldRow, most recent at one
 * end, bounded by entries and by bytes (each entry counts its `bytes`, at least 1), and the same
 * rows in an ItemIdIndex, which answers a request's hits without reading the map or the entries
 * (ItemCache.lookup). Recency moves an entry to the recent end only once a quarter of the entries
 * has moved there since it last did (see `touch`), and a hit found in the index moves nothing
 * while the cache is below half its bounds (see `touchFromIndex`). lru-cache, which this replaces
 * for rows, relinked neighbours kept in separate arrays and read two more for its TTL on every
 * hit: a 3,000-candidate request spent more on those reads, scattered over memory, than on
 * anything else of its fetch.
 */
export class RowLru {
  private readonly byId = new Map<string, HeldRow>();
  /** The same rows in typed arrays, for the hit path (see ItemIdIndex). */
  readonly index = new ItemIdIndex();
  private oldest: HeldRow | undefined;
  private newest: HeldRow | undefined;
  private bytesHeld = 0;
  private ticks = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxBytes: number,
    /** Called for each entry dropped to make room (not for replaced or deleted ones). */
    private readonly onEvict: () => void = () => undefined,
  ) {}

  get size(): number {
    return this.byId.size;
  }

  get bytes(): number {
    return this.bytesHeld;
  }

  /** The entry of `id`, whatever its expiry, without a change of recency. */
  peek(id: string): HeldRow | undefined {
    return this.byId.get(id);
  }

  /**
   * Marks `held` as used. It moves to the recent end only when more than a quarter of the entries
   * moved there since it last did: until then it is among the most recent quarter, which eviction
   * reaches last, so moving it would change no eviction before its next use.
   */
  touch(held: HeldRow): void {
    if (this.ticks - held.tick <= this.byId.size >> 2) return;
    this.unlink(held);
    this.append(held);
  }

  /**
   * `touch` for a hit found in the index, whose record says the row last moved at `tick` (its
   * tick as an int32): the row itself is read only when it may have to move, and never while the
   * cache holds less than half of both its bounds (see `recencyKept`).
   */
  touchFromIndex(held: HeldRow, tick: number): void {
    if (!this.recencyKept()) return;
    if ((((this.ticks | 0) - tick) | 0) > this.byId.size >> 2) this.touch(held);
  }

  /**
   * Whether hits found in the index move their rows. Below half of both bounds no eviction can
   * come before the cache has taken as many rows again as it holds (or rows of as many bytes
   * again), so recency decides nothing yet; a row moves on its first hit past that point. Moving
   * reads the row's entry and its neighbours (three cache misses beside the model threads), and
   * with a catalog that fits the cache that was most of what a hit cost (README: Round trips and
   * the item cache).
   */
  private recencyKept(): boolean {
    return this.byId.size * 2 >= this.maxEntries || this.bytesHeld * 2 >= this.maxBytes;
  }

  /**
   * Holds `item` for `id` at the recent end (replacing any entry of `id`), then evicts the least
   * recent entries past the bounds. An item larger than maxBytes is not held, and `id`'s entry is
   * dropped: the caller asked to replace it.
   */
  set(id: string, item: CachedItem, expiresAt: number): void {
    this.delete(id);
    const weight = Math.max(1, item.bytes);
    if (weight > this.maxBytes) return;
    const held = new Held(id, item.row, item.ts, item.bytes, expiresAt, this.index);
    this.byId.set(id, held);
    this.bytesHeld += weight;
    this.append(held);
    this.index.add(held);
    while (this.byId.size > this.maxEntries || this.bytesHeld > this.maxBytes) {
      this.remove(this.oldest!);
      this.onEvict();
    }
  }

  delete(id: string): boolean {
    const held = this.byId.get(id);
    if (held === undefined) return false;
    this.remove(held);
    return true;
  }

  clear(): void {
    this.byId.clear();
    this.index.clear();
    this.oldest = this.newest = undefined;
    this.bytesHeld = 0;
  }

  /** Entries from the most recent, without a change of recency. */
  *entries(): Iterable<HeldRow> {
    for (let held = this.newest; held !== undefined; held = held.older) yield held;
  }

  private remove(held: HeldRow): void {
    this.byId.delete(held.id);
    this.index.remove(held);
    this.bytesHeld -= Math.max(1, held.bytes);
    this.unlink(held);
  }

  private append(held: HeldRow): void {
    held.tick = ++this.ticks;
    this.index.noteTick(held);
    held.older = this.newest;
    held.newer = undefined;
    if (this.newest !== undefined) this.newest.newer = held;
    else this.oldest = held;
    this.newest = held;
  }

  private unlink(held: HeldRow): void {
    if (held.older !== undefined) held.older.newer = held.newer;
    else this.oldest = held.newer;
    if (held.newer !== undefined) held.newer.older = held.older;
    else this.newest = held.older;
    held.older = held.newer = undefined;
  }
}
