import { InputFeeds } from '@app/scoring';
import { BundleSpec, ModelInputSpec } from '../bundle/bundle-spec';
import { CompiledColumn, compileColumn } from './column-compiler';
import { FeatureFrame } from './feature-frame';

interface CompiledInput {
  name: string;
  dtype: ModelInputSpec['dtype'];
  columns: CompiledColumn[];
}

/**
 * Writes one model's input tensors straight into typed arrays. Columns that read only user and
 * context features are computed once per request and tiled down the rows.
 */
export class TensorBuilder {
  private readonly inputs: CompiledInput[];

  constructor(inputs: readonly ModelInputSpec[], features: BundleSpec['features']) {
    this.inputs = inputs.map((input) => ({
      name: input.name,
      dtype: input.dtype,
      columns: input.columns.map((column) => compileColumn(column, features)),
    }));
  }

  build(frame: FeatureFrame): InputFeeds {
    const rows = frame.itemIds.length;
    const feeds: InputFeeds = {};
    for (const input of this.inputs) {
      const width = input.columns.length;
      if (input.dtype === 'float32') {
        const data = new Float32Array(rows * width);
        fill(input.columns, frame, rows, width, data, 1);
        feeds[input.name] = { dtype: 'float32', data, dims: [rows, width] };
      } else {
        // Ids are non-negative and below 2^31: writing the low words through an Int32Array view
        // is much faster than BigInt per element, and the fresh buffer's high words are already 0.
        const data = new BigInt64Array(rows * width);
        fill(input.columns, frame, rows, width, new Int32Array(data.buffer), 2);
        feeds[input.name] = { dtype: 'int64', data, dims: [rows, width] };
      }
    }
    return feeds;
  }
}

function fill(
  columns: readonly CompiledColumn[],
  frame: FeatureFrame,
  rows: number,
  width: number,
  out: Float32Array | Int32Array,
  stride: number,
): void {
  for (let c = 0; c < width; c++) {
    const column = columns[c];
    if (column.perItem) {
      for (let r = 0; r < rows; r++) out[(r * width + c) * stride] = column.compute(frame, r);
    } else {
      const value = column.compute(frame, 0);
      for (let r = 0; r < rows; r++) out[(r * width + c) * stride] = value;
    }
  }
}
