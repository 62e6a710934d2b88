import { FeatureRow } from '@app/features';
import { CompiledColumn } from './column-compiler';
import { FeatureFrame } from './feature-frame';
import { TextReader } from './feature-values';

/** What one item row gives a model's columns, whoever the user is. */
export interface ItemRowValues {
  /** The item's id: a row object is only reused for the id it was computed for. */
  id: string;
  /** One value per item-only column. */
  values: Float64Array;
  /** One string per item key (the item part of user x item crosses and matches). */
  keys: string[];
}

/**
 * Item-only values and item keys kept beside each stored row object, in a WeakMap: they live
 * exactly as long as the row (the item cache's entry, or the in-memory store's row), and an
 * updated row is a new object, so it is computed afresh. A row whose request sent features of
 * its own is computed every time, never kept.
 */
export class ItemRowCache {
  private readonly kept = new WeakMap<FeatureRow, ItemRowValues>();

  constructor(
    private readonly columns: readonly CompiledColumn[],
    private readonly keyReaders: readonly TextReader[],
  ) {}

  get(stored: FeatureRow, frame: FeatureFrame, row: number): ItemRowValues {
    const kept = this.kept.get(stored);
    if (kept !== undefined && kept.id === frame.itemIds[row]) return kept;
    const fresh = this.compute(frame, row);
    this.kept.set(stored, fresh);
    return fresh;
  }

  compute(frame: FeatureFrame, row: number): ItemRowValues {
    const values = new Float64Array(this.columns.length);
    for (let s = 0; s < this.columns.length; s++) values[s] = this.columns[s].compute(frame, row);
    const keys = new Array<string>(this.keyReaders.length);
    for (let k = 0; k < this.keyReaders.length; k++) keys[k] = this.keyReaders[k](frame, row);
    return { id: frame.itemIds[row], values, keys };
  }
}
