import { FeatureRow } from '@app/features';
import { ColumnSpec } from '../bundle/bundle-definition';
import { CompiledColumn } from './column-compiler';
import { FeatureFrame } from './feature-frame';
import { TextReader } from './feature-values';

/** What one item row gives a bundle's columns, whoever the user is. */
interface KeptRow {
  /** The item's id: a row object is only reused for the id it was computed for. */
  id: string;
  /** Where its item-only column values start in the arena. */
  at: number;
  /** One string per item key (the item part of user x item crosses and matches). */
  keys: string[];
}

/** The distinct values of one item key in a request, and each row's index among them. */
export interface DistinctKeys {
  distinct: string[];
  index: Int32Array;
}

/** One request's item side, computed once for all the bundle's models. */
export interface RequestItems {
  /**
   * Item-only column values, row after row of the request: row r's value of slot s is
   * `values[at[r] + s]`. A kept row's values stay where they are (in the cache's arena); a row
   * computed for this request alone is in a request-own array.
   */
  at: Int32Array;
  /** Per row: the array its values are in (the arena, or the request's own). */
  source: Float64Array[];
  keys: DistinctKeys[];
}

/** Rows an arena starts with room for; it doubles as items come. */
const INITIAL_ARENA_ROWS = 1024;

/**
 * The item side of a bundle's tensors, shared by its models (the example bundle's two models
 * read the same item columns and keys). Item-only column values are kept for each stored row
 * object in one packed arena (a Float64Array, the row's values side by side), so a request
 * gathers them from contiguous memory instead of chasing a small array per item across the heap;
 * item keys are kept beside. What is kept lives exactly as long as the row object (the item
 * cache's entry, or the in-memory store's row): a WeakMap finds it, and a FinalizationRegistry
 * gives the row's arena slot back once the row is collected. An updated row is a new object, so
 * it is computed afresh. A row whose request sent features of its own is computed every time,
 * never kept. Per request, the rows are looked up once and each key's distinct values listed
 * once, whichever model asks first (keyed by the frame, so nothing outlives the request).
 */
export class ItemRowCache {
  private readonly columns: CompiledColumn[] = [];
  private readonly columnSlots = new Map<string, number>();
  private readonly keyReaders: TextReader[] = [];
  private readonly keySlots = new Map<string, number>();
  private kept = new WeakMap<FeatureRow, KeptRow>();
  private readonly requests = new WeakMap<FeatureFrame, RequestItems>();
  /** Values of kept rows, `width` per slot; grows by doubling (a copy, old arrays stay valid). */
  private arena = new Float64Array(0);
  /** Values per slot: the columns when the arena was made. */
  private width = -1;
  private nextSlot = 0;
  private readonly freeSlots: number[] = [];
  /** Counts arenas started over: a slot of an earlier one is not the current one's to reuse. */
  private generation = 0;
  private readonly released = new FinalizationRegistry<{ generation: number; at: number }>(
    ({ generation, at }) => {
      if (generation === this.generation) this.freeSlots.push(at);
    },
  );

  /** The slot of an item-only column's value; columns with equal specs share one. */
  columnSlot(spec: ColumnSpec, column: CompiledColumn): number {
    const key = JSON.stringify(spec);
    let slot = this.columnSlots.get(key);
    if (slot === undefined) this.columnSlots.set(key, (slot = this.columns.push(column) - 1));
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
    const source = new Array<Float64Array>(n);
    const keyed = new Array<string[]>(n);
    if (!this.prepared()) {
      source.fill(this.arena);
      return { at, source, keys: [] };
    }
    const width = this.width;
    // Rows computed for this request alone: counted first, so they share one array.
    let own: Float64Array | undefined;
    let owned = 0;
    for (let r = 0; r < n; r++) {
      const stored: FeatureRow | undefined = frame.itemStored[r];
      // Request-supplied features change the values: those rows are computed, never kept.
      if (stored !== undefined && frame.itemRequest[r] === undefined) {
        const kept = this.kept.get(stored) ?? this.keep(stored, frame.itemIds[r], frame, r);
        // A row object kept under another id is computed for this request alone.
        if (kept.id === frame.itemIds[r]) {
          at[r] = kept.at;
          keyed[r] = kept.keys;
          continue;
        }
      }
      own ??= new Float64Array(n * width);
      at[r] = owned * width;
      keyed[r] = this.computeInto(own, at[r], frame, r);
      source[r] = own;
      owned++;
    }
    // Kept rows read the arena as it is now: it holds every slot handed out so far.
    for (let r = 0; r < n; r++) source[r] ??= this.arena;
    return { at, source, keys: this.keyReaders.map((_, slot) => distinctKeys(keyed, slot)) };
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
      const frame: FeatureFrame = {
        userId: '',
        userRequest: undefined,
        userStored: undefined,
        context: undefined,
        itemIds: part.map(([id]) => id),
        itemRequest: [],
        itemStored: part.map(([, row]) => row),
        onBadValue: () => (found.bad = true),
      };
      for (let r = 0; r < part.length; r++) {
        const row = part[r][1];
        if (this.kept.has(row)) continue;
        found.bad = false;
        const values = this.keep(row, part[r][0], frame, r);
        if (found.bad) this.forget(row, values);
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
    if (this.width !== this.columns.length) this.reset();
    return true;
  }

  /** Computes a stored row of `id` into a slot of the arena and keeps it. */
  private keep(stored: FeatureRow, id: string, frame: FeatureFrame, row: number): KeptRow {
    const at = this.slot();
    const kept = { id, at, keys: this.computeInto(this.arena, at, frame, row) };
    this.kept.set(stored, kept);
    this.released.register(stored, { generation: this.generation, at }, kept);
    return kept;
  }

  /** Undoes `keep` at once: the row is not kept, and its slot is free again. */
  private forget(stored: FeatureRow, kept: KeptRow): void {
    this.kept.delete(stored);
    this.released.unregister(kept);
    this.freeSlots.push(kept.at);
  }

  private computeInto(into: Float64Array, at: number, frame: FeatureFrame, row: number): string[] {
    for (let s = 0; s < this.columns.length; s++)
      into[at + s] = this.columns[s].compute(frame, row);
    const keys = new Array<string>(this.keyReaders.length);
    for (let k = 0; k < this.keyReaders.length; k++) keys[k] = this.keyReaders[k](frame, row);
    return keys;
  }

  /** A free slot's first value index, growing the arena when none is free. */
  private slot(): number {
    const free = this.freeSlots.pop();
    if (free !== undefined) return free;
    const at = this.nextSlot * this.width;
    if (at + this.width > this.arena.length) {
      const grown = new Float64Array(
        Math.max(INITIAL_ARENA_ROWS * this.width, this.arena.length * 2),
      );
      grown.set(this.arena);
      this.arena = grown;
    }
    this.nextSlot++;
    return at;
  }

  private reset(): void {
    this.generation++;
    this.width = this.columns.length;
    this.kept = new WeakMap();
    this.arena = new Float64Array(INITIAL_ARENA_ROWS * Math.max(1, this.width));
    this.nextSlot = 0;
    this.freeSlots.length = 0;
  }
}

function distinctKeys(keyed: readonly string[][], slot: number): DistinctKeys {
  const seen = new Map<string, number>();
  const distinct: string[] = [];
  const index = new Int32Array(keyed.length);
  for (let r = 0; r < keyed.length; r++) {
    const key = keyed[r][slot];
    let k = seen.get(key);
    if (k === undefined) {
      k = distinct.push(key) - 1;
      seen.set(key, k);
    }
    index[r] = k;
  }
  return { distinct, index };
}
