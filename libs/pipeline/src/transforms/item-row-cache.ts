import { FeatureRow } from '@app/features';
import { ColumnSpec } from '../bundle/bundle-definition';
import { CompiledColumn } from './column-compiler';
import { FeatureFrame } from './feature-frame';
import { TextReader } from './feature-values';

/** What one item row gives a bundle's columns, whoever the user is. */
export interface ItemRowValues {
  /** The item's id: a row object is only reused for the id it was computed for. */
  id: string;
  /** One value per item-only column. */
  values: Float64Array;
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
  rows: ItemRowValues[];
  keys: DistinctKeys[];
}

/**
 * The item side of a bundle's tensors, shared by its models (the example bundle's two models
 * read the same item columns and keys). Item-only column values and item keys are kept beside
 * each stored row object, in a WeakMap: they live exactly as long as the row (the item cache's
 * entry, or the in-memory store's row), and an updated row is a new object, so it is computed
 * afresh. A row whose request sent features of its own is computed every time, never kept. Per
 * request, the rows are looked up once and each key's distinct values listed once, whichever
 * model asks first (keyed by the frame, so nothing outlives the request).
 */
export class ItemRowCache {
  private readonly columns: CompiledColumn[] = [];
  private readonly columnSlots = new Map<string, number>();
  private readonly keyReaders: TextReader[] = [];
  private readonly keySlots = new Map<string, number>();
  private readonly kept = new WeakMap<FeatureRow, ItemRowValues>();
  private readonly requests = new WeakMap<FeatureFrame, RequestItems>();

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
      const rows = this.rows(frame);
      items = { rows, keys: this.keyReaders.map((_, slot) => distinctKeys(rows, slot)) };
      this.requests.set(frame, items);
    }
    return items;
  }

  private rows(frame: FeatureFrame): ItemRowValues[] {
    const n = frame.itemIds.length;
    const rows = new Array<ItemRowValues>(n);
    if (this.columns.length === 0 && this.keyReaders.length === 0) return rows;
    for (let r = 0; r < n; r++) {
      const stored: FeatureRow | undefined = frame.itemStored[r];
      // Request-supplied features change the values: those rows are computed, never kept.
      rows[r] =
        stored === undefined || frame.itemRequest[r] !== undefined
          ? this.compute(frame, r)
          : this.keptFor(stored, frame, r);
    }
    return rows;
  }

  private keptFor(stored: FeatureRow, frame: FeatureFrame, row: number): ItemRowValues {
    const kept = this.kept.get(stored);
    // A model registered after the row was kept (never in a loaded scene) finds it too short.
    if (
      kept !== undefined &&
      kept.id === frame.itemIds[row] &&
      kept.values.length === this.columns.length &&
      kept.keys.length === this.keyReaders.length
    )
      return kept;
    const fresh = this.compute(frame, row);
    this.kept.set(stored, fresh);
    return fresh;
  }

  private compute(frame: FeatureFrame, row: number): ItemRowValues {
    const values = new Float64Array(this.columns.length);
    for (let s = 0; s < this.columns.length; s++) values[s] = this.columns[s].compute(frame, row);
    const keys = new Array<string>(this.keyReaders.length);
    for (let k = 0; k < this.keyReaders.length; k++) keys[k] = this.keyReaders[k](frame, row);
    return { id: frame.itemIds[row], values, keys };
  }
}

function distinctKeys(rows: readonly ItemRowValues[], slot: number): DistinctKeys {
  const seen = new Map<string, number>();
  const distinct: string[] = [];
  const index = new Int32Array(rows.length);
  for (let r = 0; r < rows.length; r++) {
    const key = rows[r].keys[slot];
    let k = seen.get(key);
    if (k === undefined) {
      k = distinct.push(key) - 1;
      seen.set(key, k);
    }
    index[r] = k;
  }
  return { distinct, index };
}
