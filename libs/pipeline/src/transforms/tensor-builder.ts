import { FeatureRow } from '@app/features';
import { InputFeeds } from '@app/scoring';
import { ModelInputSpec } from '../bundle/bundle-definition';
import { CompiledColumn, compileColumn } from './column-compiler';
import { FeatureFrame } from './feature-frame';
import { FeatureValues } from './feature-values';

interface CompiledInput {
  name: string;
  dtype: ModelInputSpec['dtype'];
  columns: CompiledColumn[];
  /** Per column: its slot among the item-only values of a row, or -1. */
  itemSlot: number[];
}

interface ItemValues {
  id: string;
  values: Float64Array;
}

/**
 * Writes one model's input tensors straight into typed arrays. Columns that read only user and
 * context features are computed once per request and tiled down the rows. Columns that read
 * only item features are computed once per item row and kept beside that row object (a
 * WeakMap, so they live exactly as long as the cached row): a warm item costs a lookup and a
 * copy, not its hashing again.
 */
export class TensorBuilder {
  private readonly inputs: CompiledInput[];
  private readonly itemColumns: CompiledColumn[] = [];
  private readonly itemValues = new WeakMap<FeatureRow, ItemValues>();

  /** `values`: the bundle's feature readers, shared by all its models. */
  constructor(inputs: readonly ModelInputSpec[], values: FeatureValues) {
    this.inputs = inputs.map((input) => {
      const columns = input.columns.map((column) => compileColumn(column, values));
      const itemSlot = columns.map((c) =>
        c.perItem && c.itemOnly ? this.itemColumns.push(c) - 1 : -1,
      );
      return { name: input.name, dtype: input.dtype, columns, itemSlot };
    });
  }

  build(frame: FeatureFrame): InputFeeds {
    const rows = frame.itemIds.length;
    for (const input of this.inputs) for (const column of input.columns) column.prepare?.(frame);
    const items = this.itemColumns.length > 0 ? this.itemOnlyValues(frame) : undefined;
    const feeds: InputFeeds = {};
    for (const input of this.inputs) {
      const width = input.columns.length;
      if (input.dtype === 'float32') {
        const data = new Float32Array(rows * width);
        this.fill(input, frame, rows, data, 1, items);
        feeds[input.name] = { dtype: 'float32', data, dims: [rows, width] };
      } else {
        // Ids are non-negative and below 2^31: writing the low words through an Int32Array view
        // is much faster than BigInt per element, and the fresh buffer's high words are already 0.
        const data = new BigInt64Array(rows * width);
        this.fill(input, frame, rows, new Int32Array(data.buffer), 2, items);
        feeds[input.name] = { dtype: 'int64', data, dims: [rows, width] };
      }
    }
    return feeds;
  }

  /** rows x item-only columns, from each row's kept values where its row object is unchanged. */
  private itemOnlyValues(frame: FeatureFrame): Float64Array {
    const slots = this.itemColumns.length;
    const out = new Float64Array(frame.itemIds.length * slots);
    for (let r = 0; r < frame.itemIds.length; r++) {
      const stored = frame.itemStored[r];
      // Request-supplied features change the values: those rows are computed, never kept.
      if (stored === undefined || frame.itemRequest[r] !== undefined) {
        for (let s = 0; s < slots; s++) out[r * slots + s] = this.itemColumns[s].compute(frame, r);
        continue;
      }
      let kept = this.itemValues.get(stored);
      if (kept === undefined || kept.id !== frame.itemIds[r]) {
        const values = new Float64Array(slots);
        for (let s = 0; s < slots; s++) values[s] = this.itemColumns[s].compute(frame, r);
        kept = { id: frame.itemIds[r], values };
        this.itemValues.set(stored, kept);
      }
      out.set(kept.values, r * slots);
    }
    return out;
  }

  private fill(
    input: CompiledInput,
    frame: FeatureFrame,
    rows: number,
    out: Float32Array | Int32Array,
    stride: number,
    items: Float64Array | undefined,
  ): void {
    const width = input.columns.length;
    const slots = this.itemColumns.length;
    for (let c = 0; c < width; c++) {
      const column = input.columns[c];
      const slot = input.itemSlot[c];
      if (slot >= 0 && items) {
        for (let r = 0; r < rows; r++) out[(r * width + c) * stride] = items[r * slots + slot];
      } else if (column.perItem) {
        for (let r = 0; r < rows; r++) out[(r * width + c) * stride] = column.compute(frame, r);
      } else {
        const value = column.compute(frame, 0);
        for (let r = 0; r < rows; r++) out[(r * width + c) * stride] = value;
      }
    }
  }
}
