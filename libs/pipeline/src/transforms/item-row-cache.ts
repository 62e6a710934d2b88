import { FeatureRow } from '@app/features';
import { ColumnSpec } from '../bundle/bundle-definition';
import { CompiledColumn } from './column-compiler';
import { FeatureFrame, featureFrame, NO_ITEM_FEATURES, rowArray } from './feature-frame';
import { TextReader } from './feature-values';
import { cellsOf, ItemArena, ItemCells, KeptRow } from './item-arena';
import { DistinctKeys, KeyListing } from './key-listing';

/** One request's item side, computed once for all the bundle's models. */
export interface RequestItems {
  /**
   * Where each row's cells start: row r's value of slot s is cell `at[r] + s` of `kept` (a kept
   * row: its cells stay where they are, in the cache's arena) or of `own.cells` (a row computed
   * for this request alone, marked in `own.rows`).
   */
  at: Int32Array;
  /** The arena as it was when the request's rows were looked up: it holds all of them. */
  kept: ItemCells;
  /** Rows computed for this request alone; undefined when there are none. */
  own: { cells: ItemCells; rows: Uint8Array } | undefined;
  keys: DistinctKeys[];
}

/** Key codes handed out beyond twice the arena's rows' keys before the arena starts over. */
const SPARE_KEY_CODES = 65_536;

/**
 * The item side of a bundle's tensors, shared by its models (the example bundle's two models
 * read the same item columns and keys). Item-only column values are kept for each stored row
 * object in one packed arena of 4-byte cells (see ItemCells: the row's values side by side, each
 * as the inputs it feeds hold it, so a row of the example bundle is 80 bytes, not the 160 of
 * float64 values), so a request gathers them from contiguous memory instead of chasing a small
 * array per item across the heap, and three passes over 3,000 random rows (keys, then each model's
 * inputs) find them in a cache that holds them all. Item keys (the item strings of crosses and
 * matches) are kept beside them as codes: each distinct key string has one number, so a request
 * lists its distinct keys by reading numbers it reads anyway and marking them in a table, with no
 * string hashing or map lookup per row. What is kept lives exactly as long as the row object (the
 * item cache's entry, or the in-memory store's row): ItemArena holds the cells, the slots and the
 * codes. Where the store hands out the holder of a row (FeatureFrame.itemHolders: the item cache's
 * entry, which the fetch has just read), the holder's memo fields remember where the row is kept
 * (the arena's token and the slot), so a warm item costs no WeakMap probe, nor a read of any
 * object but the holder: the memo is taken for the same row object in the same arena only. An updated row is a new object,
 * so it is computed afresh. A row whose request sent features of its own is computed every time,
 * never kept. Per request, the rows are looked up once and each key's distinct values listed
 * once, whichever model asks first (keyed by the frame, so nothing outlives the request).
 *
 * Key codes are never given back one by one (a row's death is not seen in time to know a code is
 * unused): once more codes were handed out than twice the keys the arena's rows can hold (plus
 * SPARE_KEY_CODES), the arena starts over and rows are computed again as requests ask for them.
 * With keys of a few thousand categories that never happens; with per-item keys (a cross of
 * item.id) under a churning item cache, it bounds the table to a multiple of what is live.
 */
export class ItemRowCache {
  /** Item sides by the bundle features and inputs they were made for (see `forInputs`). */
  private static readonly byInputs = new Map<string, WeakRef<ItemRowCache>>();

  /**
   * The item side for a bundle of these features and models' inputs: the one a loaded version
   * with the same ones has, rows kept and all, else a new one. What an item row's kept values
   * are depends on nothing else (the columns, and the declared features they read), so a version
   * whose pipeline.yaml reads items as the serving one does (a model retrained, its features
   * unchanged) starts with every item the serving version has computed, and the two find the
   * same memos in the store's holders. Its builders then register the slots the item side has
   * already. Shared only while some version holds it: the map keeps weak references.
   */
  static forInputs(signature: string): { items: ItemRowCache; shared: boolean } {
    for (const [key, ref] of ItemRowCache.byInputs)
      if (ref.deref() === undefined) ItemRowCache.byInputs.delete(key);
    const found = ItemRowCache.byInputs.get(signature)?.deref();
    if (found !== undefined) return { items: found, shared: true };
    const items = new ItemRowCache();
    ItemRowCache.byInputs.set(signature, new WeakRef(items));
    return { items, shared: false };
  }

  private readonly columns: CompiledColumn[] = [];
  /** Per column slot: whether it feeds int64 inputs (an int32 cell) or float32 ones (a float32). */
  private readonly slotIsInt: boolean[] = [];
  private readonly columnSlots = new Map<string, number>();
  private readonly keyReaders: TextReader[] = [];
  private readonly keySlots = new Map<string, number>();
  private readonly requests = new WeakMap<FeatureFrame, RequestItems>();
  /** Kept rows' cells (`width` a row: the column values, then the key codes) and key codes. */
  private readonly arena = new ItemArena();
  /** Each request's distinct keys, listed by code. */
  private readonly listing = new KeyListing();

  /**
   * The slot of an item-only column's value for inputs of `dtype`; columns with equal specs and
   * dtypes share one.
   */
  columnSlot(spec: ColumnSpec, column: CompiledColumn, dtype: 'float32' | 'int64'): number {
    const key = `${dtype} ${JSON.stringify(spec)}`;
    let slot = this.columnSlots.get(key);
    if (slot === undefined) {
      this.columnSlots.set(key, (slot = this.columns.push(column) - 1));
      this.slotIsInt.push(dtype === 'int64');
    }
    return slot;
  }

  /** The slot of an item key; keys with equal signatures share one. */
  keySlot(signature: string, read: TextReader): number {
    let slot = this.keySlots.get(signature);
    if (slot === undefined) this.keySlots.set(signature, (slot = this.keyReaders.push(read) - 1));
    return slot;
  }

  forRequest(frame: FeatureFrame): RequestItems {
    let items = this.requests.get(frame);
    if (items === undefined) {
      items = this.rows(frame);
      this.requests.set(frame, items);
    }
    return items;
  }

  private rows(frame: FeatureFrame): RequestItems {
    const n = frame.itemIds.length;
    const at = new Int32Array(n);
    if (!this.prepared()) return { at, kept: this.arena.cells, own: undefined, keys: [] };
    const { width, token } = this.arena;
    const holders = frame.itemHolders;
    const memos = frame.itemMemos;
    // Rows computed for this request alone share cells of their own; their keys are strings, not
    // codes.
    let own: RequestItems['own'];
    let ownKeys: string[][] | undefined;
    let owned = 0;
    for (let r = 0; r < n; r++) {
      const stored: FeatureRow | undefined = frame.itemStored[r];
      // Request-supplied features change the values: those rows are computed, never kept.
      if (stored !== undefined && frame.itemRequest[r] === undefined) {
        // The store's holder of this id's row remembers where it is kept: no lookup by row. The
        // fetch read its memo already; the holder itself is read only if that was not this one's
        // (it may have been written since).
        if (memos !== undefined && memos.keys[r] === token) {
          at[r] = memos.values[r];
          continue;
        }
        const holder = holders?.[r];
        if (holder !== undefined && holder.memoKey === token && holder.memoRow === stored) {
          at[r] = holder.memoValue;
          continue;
        }
        const kept = this.arena.find(stored) ?? this.keep(stored, frame.itemIds[r], frame, r);
        // A row object kept under another id is computed for this request alone.
        if (kept.id === frame.itemIds[r]) {
          at[r] = kept.at;
          if (holder?.row === stored) {
            holder.memoRow = stored;
            holder.memoKey = token;
            holder.memoValue = kept.at;
          }
          continue;
        }
      }
      own ??= { cells: cellsOf(new ArrayBuffer(n * width * 4)), rows: new Uint8Array(n) };
      ownKeys ??= new Array<string[]>(n);
      at[r] = owned * width;
      this.computeValues(own.cells, at[r], frame, r);
      ownKeys[r] = this.readKeys(frame, r);
      own.rows[r] = 1;
      owned++;
    }
    // Kept rows read the arena as it is now: it holds every slot handed out so far.
    const cells = this.arena.cells;
    readAhead(cells.ints, at, width, own?.rows);
    const serial = this.listing.next();
    const { texts } = this.arena;
    const keys = new Array<DistinctKeys>(this.keyReaders.length);
    for (let slot = 0; slot < keys.length; slot++) {
      const offset = this.columns.length + slot;
      keys[slot] = this.listing.list(slot, serial, at, cells.ints, offset, texts, ownKeys);
    }
    return { at, kept: cells, own, keys };
  }

  /**
   * Computes and keeps `rows` (stored rows by id) ahead of requests, `chunk` rows per event-loop
   * turn: a version about to serve then finds the items it will be asked for already computed,
   * instead of computing thousands in its first requests. A row with a value unusable as its
   * declared type is left for a request to compute, which reports it with its requestId.
   * Resolves with the rows kept.
   */
  async warm(rows: readonly [string, FeatureRow][], chunk = 256): Promise<number> {
    if (!this.prepared()) return 0;
    const found = { bad: false };
    let kept = 0;
    for (let from = 0; from < rows.length; from += chunk) {
      if (from > 0) await new Promise((resolve) => setImmediate(resolve));
      const part = rows.slice(from, from + chunk);
      const frame = featureFrame({
        userId: '',
        userRequest: undefined,
        userStored: undefined,
        context: undefined,
        itemIds: rowArray(part.length, (r) => part[r][0]),
        itemRequest: NO_ITEM_FEATURES,
        itemStored: rowArray(part.length, (r) => part[r][1]),
        onBadValue: () => (found.bad = true),
      });
      for (let r = 0; r < part.length; r++) {
        const row = part[r][1];
        if (this.arena.find(row) !== undefined) continue;
        found.bad = false;
        const values = this.keep(row, part[r][0], frame, r);
        if (found.bad) this.arena.forget(row, values);
        else kept++;
      }
    }
    return kept;
  }

  /**
   * False when the bundle reads nothing of items. A model registered after rows were kept (never
   * in a loaded scene) starts the arena over.
   */
  private prepared(): boolean {
    if (this.columns.length === 0 && this.keyReaders.length === 0) return false;
    const width = this.columns.length + this.keyReaders.length;
    if (this.arena.width !== width || this.arena.texts.length > this.keyCodeLimit()) {
      this.arena.reset(width);
      this.listing.reset(this.keyReaders.length);
    }
    return true;
  }

  /** Codes handed out past this many: most belong to rows long gone (see the class comment). */
  private keyCodeLimit(): number {
    return 2 * this.arena.rows * this.keyReaders.length + SPARE_KEY_CODES;
  }

  /** Computes a stored row of `id` into a slot of the arena and keeps it. */
  private keep(stored: FeatureRow, id: string, frame: FeatureFrame, row: number): KeptRow {
    const kept = this.arena.keep(stored, id);
    const cells = this.arena.cells;
    this.computeValues(cells, kept.at, frame, row);
    const offset = kept.at + this.columns.length;
    for (let k = 0; k < this.keyReaders.length; k++)
      cells.ints[offset + k] = this.keyCode(this.keyReaders[k](frame, row));
    return kept;
  }

  private computeValues(into: ItemCells, at: number, frame: FeatureFrame, row: number): void {
    for (let s = 0; s < this.columns.length; s++) {
      const value = this.columns[s].compute(frame, row);
      if (this.slotIsInt[s]) into.ints[at + s] = value;
      else into.floats[at + s] = value;
    }
  }

  private readKeys(frame: FeatureFrame, row: number): string[] {
    const keys = new Array<string>(this.keyReaders.length);
    for (let k = 0; k < this.keyReaders.length; k++) keys[k] = this.keyReaders[k](frame, row);
    return keys;
  }

  /** The code of a key string (see ItemArena.keyCode), with room to list it. */
  private keyCode(text: string): number {
    const code = this.arena.keyCode(text);
    this.listing.fit(code);
    return code;
  }
}

/** What readAhead found: written, never read, so that no compiler drops its reads. */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- see above
let readAheadSink = 0;

/**
 * Reads the first and last cell of each kept row of a request (`at[r]`, `width` cells; rows of
 * the request's own, marked in `ownRows`, are not in `ints`). The rows lie scattered over the
 * arena, and a loop this small keeps many of those reads in flight, where the key listing and
 * the tensor fill that read them next kept about one. Alternated request by request in one
 * ranker (3,000 candidates at c=4), a model's tensor build took 0.39-0.45 ms against 0.41-0.51
 * without (test/bench/RESULTS.md, bench:rank).
 */
function readAhead(
  ints: Int32Array,
  at: Int32Array,
  width: number,
  ownRows: Uint8Array | undefined,
): void {
  if (width === 0) return;
  let touched = 0;
  for (let r = 0; r < at.length; r++) {
    if (ownRows !== undefined && ownRows[r] === 1) continue;
    if (ints[at[r]] !== 0) touched++;
    if (ints[at[r] + width - 1] !== 0) touched++;
  }
  readAheadSink = touched;
}
