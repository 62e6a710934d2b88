import { randomInt } from 'node:crypto';
import type { FeatureRow, ItemHolder, ItemMemos } from '../feature-row';
import {
  CHAR_INTS,
  CHARS,
  EMPTY,
  EXPIRES,
  HASH,
  hashId,
  LENGTH,
  MAX_INDEXED_ID_LENGTH,
  MEMO_KEY,
  MEMO_VALUE,
  packed,
  REC,
  REMOVED,
  STATE,
  TICK,
} from './item-id-record';

/** What the index keeps of a cached row; `rec` and `entry` are the index's own. */
export interface IndexedRow extends ItemHolder {
  readonly id: string;
  readonly expiresAt: number;
  readonly tick: number;
  /** Where the row's record starts in the index's ints; -1 when it has none. */
  rec: number;
  /** The row's number in the index's entry list; -1 when it has none. */
  entry: number;
}

/** Probes a lookup or an insertion takes at most; past them the id goes the Map's way. */
export const MAX_INDEX_PROBES = 64;
const INITIAL_RECORDS = 1024;

/**
 * An index of a feature store's item rows in typed arrays, beside its Map (the item cache's rows,
 * the in-memory store's): a lookup reads one 64-byte
 * record (the id's hash and characters, where the row is, its expiry, its recency tick and the
 * consumer's memo) and the row and its holder from one array, instead of the Map's bucket, its
 * entry, the held key string and the entry object, scattered over the heap. On the rank path a
 * 3,000-candidate request's lookups took 1.1-1.8 ms of the serving thread that way, against
 * 0.21-0.27 ms for the same lookups alone in a loop: beside the model threads every one of those
 * reads misses the CPU's caches (README: Current limits).
 *
 * The Map stays the cache's truth: the index holds a subset of its rows (ids of at most
 * MAX_INDEXED_ID_LENGTH characters below 256; an insertion past MAX_INDEX_PROBES is skipped) and
 * a lookup it cannot answer goes the Map's way. The owner (RowLru, InMemoryFeatureStore) adds a
 * row when it holds it and removes it when it drops it; a row's id, row and expiry never change
 * while it is held (an update is a new row), its tick and memo are mirrored as they change
 * (`noteTick`, and `noteMemo` from IndexedHolder's setters). Open addressing with linear probing,
 * a hash seeded per process (ids cannot be chosen ahead to collide, and a run of probes longer
 * than MAX_INDEX_PROBES only sends them the Map's way); when live and removed records fill half
 * the table it is rebuilt with four records a live row (at least INITIAL_RECORDS). Memory: 64
 * bytes a record, 2-4 records a held row, plus two array slots a row.
 */
export class ItemIdIndex {
  private ints = new Int32Array(0);
  private floats = new Float64Array(0);
  private mask = -1;
  private live = 0;
  private removed = 0;
  /** Row and holder of each entry, side by side: `[row0, holder0, row1, holder1, ...]`. */
  private pairs: (FeatureRow | IndexedRow | undefined)[] = [];
  private readonly freeEntries: number[] = [];
  private readonly seed: number;
  /** findAll's answer, used again by every call. */
  private found = new Int32Array(0);
  /** What findAll's reads ahead found, kept so that no compiler drops them as unused. */
  private touched = 0;

  constructor(seed = randomInt(0x7fffffff)) {
    this.seed = seed;
    this.reset(INITIAL_RECORDS);
  }

  /** Rows indexed now. */
  get size(): number {
    return this.live;
  }

  /** Indexes `held` (not indexed yet) unless its id cannot be; sets its `rec` and `entry`. */
  add(held: IndexedRow): void {
    held.rec = -1;
    held.entry = -1;
    if (held.id.length === 0 || held.id.length > MAX_INDEXED_ID_LENGTH) return;
    // Rebuilt first: the rebuild packs every other id.
    if ((this.live + this.removed + 1) * 2 > this.ints.length / REC) this.rebuild();
    const hash = hashId(held.id, this.seed);
    if (hash === undefined) return;
    const rec = this.freeRecord(hash);
    if (rec < 0) return;
    const entry = this.freeEntries.pop() ?? this.pairs.length / 2;
    this.pairs[2 * entry] = held.row;
    this.pairs[2 * entry + 1] = held;
    held.entry = entry;
    this.write(rec, hash, held);
  }

  /** Drops `held` from the index, if it is there. */
  remove(held: IndexedRow): void {
    if (held.rec < 0) return;
    this.ints[held.rec + STATE] = REMOVED;
    this.pairs[2 * held.entry] = this.pairs[2 * held.entry + 1] = undefined;
    this.freeEntries.push(held.entry);
    held.rec = held.entry = -1;
    this.live--;
    this.removed++;
  }

  /** Drops every row. */
  clear(): void {
    for (let e = 1; e < this.pairs.length; e += 2) {
      const held = this.pairs[e] as IndexedRow | undefined;
      if (held !== undefined) held.rec = held.entry = -1;
    }
    this.pairs = [];
    this.freeEntries.length = 0;
    this.reset(INITIAL_RECORDS);
  }

  /** Mirrors `held.tick` into its record. */
  noteTick(held: IndexedRow): void {
    if (held.rec >= 0) this.ints[held.rec + TICK] = held.tick | 0;
  }

  /** Mirrors `held`'s memo into its record: key 0 unless it is for the row held. */
  noteMemo(held: IndexedRow): void {
    if (held.rec < 0) return;
    const valid = held.row !== undefined && held.memoRow === held.row;
    this.ints[held.rec + MEMO_KEY] = valid ? held.memoKey : 0;
    this.ints[held.rec + MEMO_VALUE] = valid ? held.memoValue : 0;
  }

  /**
   * `find` for every id of `ids`: entry i of the answer is the record of `ids[i]` or -1. The
   * answer is this index's own array, longer than `ids` maybe, good until the next call.
   *
   * Three passes, so that a request's lookups do not pay their cache misses one after another:
   * the ids' hashes (their characters are warm from the body's parse), then a read of each id's
   * first record and of its row's slot in `pairs` (a loop this small keeps many reads in
   * flight, where a whole lookup between two misses kept about one), then the lookups themselves,
   * on memory now in the caches. Their hashes are computed again there: that costs less than the
   * misses cost one at a time. On the rank path (3,000 candidates at c=4 beside the model threads,
   * alternated call by call in one ranker), the whole lookup of a request took 0.37-0.41 ms
   * against 0.67-0.75 with `find` alone, and 0.54 against 0.72 in a later run on a slower machine
   * (test/bench/RESULTS.md, bench:rank).
   */
  findAll(ids: readonly string[]): Int32Array {
    const n = ids.length;
    if (this.found.length < n) this.found = new Int32Array(Math.max(n, 2 * this.found.length));
    const { found, ints, mask, pairs } = this;
    for (let i = 0; i < n; i++) {
      const hash = hashId(ids[i], this.seed);
      found[i] = hash === undefined ? -1 : (hash & mask) * REC;
    }
    let touched = 0;
    for (let i = 0; i < n; i++) {
      const rec = found[i];
      if (rec < 0) continue;
      const state = ints[rec + STATE];
      // The comparison makes the slot's read happen; what it finds does not matter.
      if (state > 0 && pairs[2 * state - 1] !== undefined) touched++;
    }
    this.touched = touched;
    for (let i = 0; i < n; i++) found[i] = found[i] < 0 ? -1 : this.find(ids[i]);
    return found;
  }

  /** The record of `id`, or -1 when the index does not hold it (it may still be cached). */
  find(id: string): number {
    const hash = hashId(id, this.seed);
    if (hash === undefined) return -1;
    const { ints, mask } = this;
    const words = (id.length + 3) >> 2;
    for (let probe = 0, slot = hash & mask; probe < MAX_INDEX_PROBES; probe++) {
      const rec = slot * REC;
      const state = ints[rec + STATE];
      if (state === EMPTY) return -1;
      if (state > 0 && ints[rec + HASH] === hash && ints[rec + LENGTH] === id.length) {
        let same = true;
        for (let w = 0; w < words; w++) {
          if (ints[rec + CHARS + w] !== packed[w]) {
            same = false;
            break;
          }
        }
        if (same) return rec;
      }
      slot = (slot + 1) & mask;
    }
    return -1;
  }

  /**
   * Hands out the row at record `rec` (from `find`) as row `i` of a fetch: its row, its holder and
   * the memo the record holds (what copyMemo would give, from the record instead of the holder).
   * Returns the holder, which it does not read.
   */
  handOut(
    rec: number,
    i: number,
    items: (FeatureRow | undefined)[],
    holders: (ItemHolder | undefined)[],
    memos: ItemMemos,
  ): IndexedRow {
    const at = 2 * (this.ints[rec + STATE] - 1);
    const holder = this.pairs[at + 1] as IndexedRow;
    items[i] = this.pairs[at] as FeatureRow | undefined;
    holders[i] = holder;
    memos.keys[i] = this.ints[rec + MEMO_KEY];
    memos.values[i] = this.ints[rec + MEMO_VALUE];
    return holder;
  }

  /** The row held at record `rec` (from `find`). */
  rowAt(rec: number): FeatureRow | undefined {
    return this.pairs[2 * (this.ints[rec + STATE] - 1)] as FeatureRow | undefined;
  }

  /** The holder at record `rec`. */
  holderAt(rec: number): IndexedRow {
    return this.pairs[2 * (this.ints[rec + STATE] - 1) + 1] as IndexedRow;
  }

  expiresAt(rec: number): number {
    return this.floats[(rec >> 1) + EXPIRES];
  }

  tickAt(rec: number): number {
    return this.ints[rec + TICK];
  }

  memoKeyAt(rec: number): number {
    return this.ints[rec + MEMO_KEY];
  }

  memoValueAt(rec: number): number {
    return this.ints[rec + MEMO_VALUE];
  }

  /** The first empty or removed record on `hash`'s run; -1 past MAX_INDEX_PROBES. */
  private freeRecord(hash: number): number {
    for (let probe = 0, slot = hash & this.mask; probe < MAX_INDEX_PROBES; probe++) {
      const rec = slot * REC;
      const state = this.ints[rec + STATE];
      if (state === EMPTY) return rec;
      if (state === REMOVED) {
        this.removed--;
        return rec;
      }
      slot = (slot + 1) & this.mask;
    }
    return -1;
  }

  /** Fills record `rec` for `held` (`packed` holds its id's characters). */
  private write(rec: number, hash: number, held: IndexedRow): void {
    const { ints } = this;
    ints[rec + HASH] = hash;
    ints[rec + STATE] = held.entry + 1;
    ints[rec + LENGTH] = held.id.length;
    for (let w = 0; w < CHAR_INTS; w++) ints[rec + CHARS + w] = packed[w];
    this.floats[(rec >> 1) + EXPIRES] = held.expiresAt;
    held.rec = rec;
    this.live++;
    this.noteTick(held);
    this.noteMemo(held);
  }

  /** A table of at least four records a live row (at least INITIAL_RECORDS), every row again. */
  private rebuild(): void {
    let records = INITIAL_RECORDS;
    while (records < (this.live + 1) * 4) records *= 2;
    this.reset(records);
    for (let e = 1; e < this.pairs.length; e += 2) {
      const held = this.pairs[e] as IndexedRow | undefined;
      if (held === undefined) continue;
      const hash = hashId(held.id, this.seed)!;
      const rec = this.freeRecord(hash);
      if (rec >= 0) {
        this.write(rec, hash, held);
        continue;
      }
      // Its run is full: it goes the Map's way from now on.
      this.pairs[e - 1] = this.pairs[e] = undefined;
      this.freeEntries.push((e - 1) / 2);
      held.rec = held.entry = -1;
    }
  }

  private reset(records: number): void {
    const buffer = new ArrayBuffer(records * REC * 4);
    this.ints = new Int32Array(buffer);
    this.floats = new Float64Array(buffer);
    this.mask = records - 1;
    this.live = 0;
    this.removed = 0;
  }
}
