import { InputFeeds } from '@app/scoring';
import { ModelInputSpec } from '../bundle/bundle-definition';
import { CompiledColumn, compileColumn } from './column-compiler';
import { FeatureFrame } from './feature-frame';
import { FeatureValues } from './feature-values';
import { ItemRowCache, RequestItems } from './item-row-cache';

/**
 * Inputs built for one scoring of a frame, by signature: a model's input with the same dtype and
 * columns as one already built is copied from it (see TensorBuilder.build).
 */
export type BuiltInputs = Map<string, Float32Array | Int32Array>;

/** A column by its position in the input, with what its values are made from. */
interface Placed {
  col: number;
  column: CompiledColumn;
  /** The item-only value slot or item key this column reads; -1 for none. */
  slot: number;
}

interface CompiledInput {
  name: string;
  /** dtype and columns: inputs of a bundle's models with equal signatures hold equal values. */
  signature: string;
  dtype: ModelInputSpec['dtype'];
  width: number;
  /** Read only user/context features: one value per request, in every row. */
  tiled: Placed[];
  /**
   * Read only item features: one kept value per item row. As runs of columns side by side in the
   * input that read slots side by side in the kept values, three numbers a run: the element
   * offset of its first column in a row, its first slot, its length (see cellRuns).
   */
  itemRuns: Int32Array;
  /** Mix user/context and one item string (its key): the column's value of the kept key. */
  keyed: Placed[];
  /** Anything else per item: computed per row. */
  perRow: Placed[];
}

/**
 * Writes one model's input tensors straight into typed arrays, with as little work per row as
 * the columns allow. Columns that read only user and context features are computed once per
 * request: they form a template row, and the template fills the whole tensor by block copies.
 * What depends on the item alone (item-only column values, and the item strings of user x item
 * crosses and matches) is computed once per item row and kept beside that row object (see
 * ItemRowCache), so a warm item costs a lookup and a few writes, not its hashing again; a cross
 * then only continues the request's user-side hash over the kept string. An input another model
 * of the bundle has already built for the request (same dtype and columns: models often share
 * their dense features) is copied from it, not built again.
 */
export class TensorBuilder {
  private readonly inputs: CompiledInput[];

  /**
   * `values`: the bundle's feature readers; `items`: the bundle's item side. Both are shared by
   * all the models of a bundle, so what they read alike is read once per request.
   */
  constructor(
    inputs: readonly ModelInputSpec[],
    values: FeatureValues,
    private readonly items = new ItemRowCache(),
  ) {
    this.inputs = inputs.map((input) => {
      const compiled: CompiledInput = {
        name: input.name,
        signature: JSON.stringify([input.dtype, input.columns]),
        dtype: input.dtype,
        width: input.columns.length,
        tiled: [],
        itemRuns: new Int32Array(0),
        keyed: [],
        perRow: [],
      };
      const stride = input.dtype === 'int64' ? 2 : 1;
      const itemOnly: Placed[] = [];
      input.columns.forEach((spec, col) => {
        const column = compileColumn(spec, values);
        if (!column.perItem) compiled.tiled.push({ col, column, slot: -1 });
        else if (column.itemOnly) {
          itemOnly.push({ col, column, slot: items.columnSlot(spec, column, input.dtype) });
        } else if (column.itemKey && column.keyValues) {
          const { signature, read } = column.itemKey;
          compiled.keyed.push({ col, column, slot: items.keySlot(signature, read) });
        } else compiled.perRow.push({ col, column, slot: -1 });
      });
      compiled.itemRuns = cellRuns(itemOnly, stride);
      return compiled;
    });
  }

  /**
   * `buffer` gives the memory each input is built in (at least the bytes asked for, of any
   * content: see ScoringEngine.tensorBuffer); by default, fresh buffers. `built`, shared by the
   * builds of one scoring of `frame` (each model's, before any is sent), lets an input equal to
   * one built already be copied from it.
   */
  build(
    frame: FeatureFrame,
    buffer: (byteLength: number) => ArrayBuffer = freshBuffer,
    built: BuiltInputs = new Map(),
  ): InputFeeds {
    const rows = frame.itemIds.length;
    for (const input of this.inputs) {
      for (const { column } of input.tiled) column.prepare?.(frame);
      for (const { column } of input.keyed) column.prepare?.(frame);
      for (const { column } of input.perRow) column.prepare?.(frame);
    }
    const items = this.items.forRequest(frame);
    const feeds: InputFeeds = {};
    for (const input of this.inputs) {
      const length = rows * input.width;
      if (input.dtype === 'float32') {
        const data = new Float32Array(buffer(length * 4), 0, length);
        this.fillOrCopy(input, frame, items, built, data, 1);
        feeds[input.name] = { dtype: 'float32', data, dims: [rows, input.width] };
      } else {
        // Ids are non-negative and below 2^31: writing the low words through an Int32Array view
        // is much faster than BigInt per element; the high words are the template row's zeros.
        const data = new BigInt64Array(buffer(length * 8), 0, length);
        this.fillOrCopy(input, frame, items, built, new Int32Array(data.buffer, 0, length * 2), 2);
        feeds[input.name] = { dtype: 'int64', data, dims: [rows, input.width] };
      }
    }
    return feeds;
  }

  /** Copies `out` from the same input in `built`, else fills it and adds it there. */
  private fillOrCopy(
    input: CompiledInput,
    frame: FeatureFrame,
    items: RequestItems,
    built: BuiltInputs,
    out: Float32Array | Int32Array,
    stride: number,
  ): void {
    const same = built.get(input.signature);
    if (same !== undefined) {
      out.set(same);
      return;
    }
    this.fill(input, frame, items, out, stride);
    built.set(input.signature, out);
  }

  private fill(
    input: CompiledInput,
    frame: FeatureFrame,
    items: RequestItems,
    out: Float32Array | Int32Array,
    stride: number,
  ): void {
    const rows = frame.itemIds.length;
    if (rows === 0) return;
    const rowLength = input.width * stride;
    // Row 0 is the template; doubling block copies fill the rest. The buffer may hold anything:
    // zeroing the template first gives every row's int64 high words (never written) their 0.
    out.fill(0, 0, rowLength);
    for (const { col, column } of input.tiled) out[col * stride] = column.compute(frame, 0);
    for (let filled = 1; filled < rows; filled *= 2) {
      const count = Math.min(filled, rows - filled);
      out.copyWithin(filled * rowLength, 0, count * rowLength);
    }
    if (input.itemRuns.length > 0) {
      // Kept rows' cells are side by side in one arena: this reads contiguous memory. The cells
      // are read as the input's own type: a copy, no conversion.
      const int = stride === 2;
      const { kept, own } = items;
      copyCells(
        input,
        out,
        int ? kept.ints : kept.floats,
        items.at,
        rowLength,
        rows,
        own?.rows,
        own === undefined ? undefined : int ? own.cells.ints : own.cells.floats,
        stride,
      );
    }
    for (const { col, column, slot } of input.keyed) {
      const { distinct, index } = items.keys[slot];
      // Keys repeat (a few hundred categories under thousands of items): each distinct one is
      // hashed or compared once per request, and the rows copy its value.
      const byKey = column.keyValues!(distinct);
      for (let r = 0, at = col * stride; r < rows; r++, at += rowLength) out[at] = byKey[index[r]];
    }
    for (const { col, column } of input.perRow) {
      for (let r = 0, at = col * stride; r < rows; r++, at += rowLength) {
        out[at] = column.compute(frame, r);
      }
    }
  }
}

/** What copyCells' reads ahead found: written, never read, so that no compiler drops them. */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- see above
let readAhead = 0;

/**
 * The item-only columns of an input (in column order) as runs: columns next to each other in a
 * row that read slots next to each other, as `[offset, slot, length]` triples (`offset` counts
 * elements of the row, `stride` a column: 2 for int64's low words). Bundles list an item's
 * columns together, and their slots are handed out in that order, so an input's item columns are
 * mostly one run or two: the copy then reads and writes consecutive cells, with no per-cell
 * lookup of where each goes. Alternated call by call in one process (the example bundle's two
 * models over 3,000 demo items, three runs): their tensors built in 0.46-0.55 ms (medians) against
 * 0.53-0.64 with a lookup per cell; no difference at 100 rows (test/bench/RESULTS.md).
 */
export function cellRuns(
  columns: readonly { col: number; slot: number }[],
  stride: number,
): Int32Array {
  const runs: number[] = [];
  columns.forEach(({ col, slot }, j) => {
    const last = runs.length - 3;
    const previous = columns[j - 1];
    if (j > 0 && col === previous.col + 1 && slot === previous.slot + 1) runs[last + 2]++;
    else runs.push(col * stride, slot, 1);
  });
  return Int32Array.from(runs);
}

/**
 * Copies each row's item-only cells into its columns of `out` (`stride` elements a column): from
 * `kept` at `at[r]`, or for a row marked in `ownRows`, from `ownCells`.
 */
function copyCells<T extends Float32Array | Int32Array>(
  { itemRuns }: CompiledInput,
  out: T,
  kept: T,
  at: Int32Array,
  rowLength: number,
  rows: number,
  ownRows: Uint8Array | undefined,
  ownCells: T | undefined,
  stride: number,
): void {
  const runCount = itemRuns.length;
  // Each row's first cell first: the rows lie scattered over the arena, and a loop this small
  // keeps many of those reads in flight, where the copy's loop kept about one. The copy then finds
  // its cells in cache. Alternated call by call in one ranker (3,000 rows at c=4), two runs:
  // 0.13-0.14 ms a call against 0.16-0.21 without, then (after ItemIdIndex.findAll) 0.105-0.15
  // against 0.135-0.155. Since ItemRowCache reads the same rows ahead first (its readAhead), it
  // makes no difference at 3,000 rows (0.098-0.122 against 0.101-0.114) and saves ~1 µs of 4.4 at
  // 100 (test/bench/RESULTS.md, bench:rank).
  let touched = 0;
  for (let r = 0; r < rows; r++) {
    const cells = ownRows !== undefined && ownRows[r] === 1 ? ownCells! : kept;
    if (cells[at[r]] !== 0) touched++;
  }
  readAhead = touched;
  for (let r = 0, base = 0; r < rows; r++, base += rowLength) {
    const cells = ownRows !== undefined && ownRows[r] === 1 ? ownCells! : kept;
    const from = at[r];
    for (let k = 0; k < runCount; k += 3) {
      const to = base + itemRuns[k];
      const first = from + itemRuns[k + 1];
      const length = itemRuns[k + 2];
      if (stride === 2) for (let j = 0; j < length; j++) out[to + 2 * j] = cells[first + j];
      else for (let j = 0; j < length; j++) out[to + j] = cells[first + j];
    }
  }
}

function freshBuffer(byteLength: number): ArrayBuffer {
  return new ArrayBuffer(byteLength);
}
