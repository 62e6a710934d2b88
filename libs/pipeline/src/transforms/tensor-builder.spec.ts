import { BundleSpec, ModelInputSpec } from '../bundle/bundle-definition';
import { compileColumn } from './column-compiler';
import { FeatureFrame } from './feature-frame';
import { fnv1a32 } from './feature-hash';
import { FeatureValues } from './feature-values';
import { InputFeeds } from '@app/scoring';
import { ItemRowCache } from './item-row-cache';
import { BuiltInputs, cellRuns, TensorBuilder } from './tensor-builder';

const features: BundleSpec['features'] = {
  user: { age: { type: 'number', default: 30 } },
  item: { price: { type: 'number', default: 0 }, category: { type: 'string', default: '' } },
  context: { device: { type: 'string', default: 'web' } },
};

const MAX_BUCKETS = 2 ** 31 - 1;

const inputs: ModelInputSpec[] = [
  {
    name: 'sparse_ids',
    dtype: 'int64',
    columns: [
      { op: 'hash', feature: { source: 'item', name: 'id' }, buckets: MAX_BUCKETS },
      { op: 'bucketize', feature: { source: 'user', name: 'age' }, boundaries: [18, 30, 50] },
      { op: 'hash', feature: { source: 'context', name: 'device' }, buckets: MAX_BUCKETS },
      {
        op: 'cross',
        features: [
          { source: 'user', name: 'id' },
          { source: 'item', name: 'category' },
        ],
        buckets: 1000,
      },
    ],
  },
  {
    name: 'dense',
    dtype: 'float32',
    columns: [
      { op: 'standardize', feature: { source: 'user', name: 'age' }, mean: 35, std: 3 },
      { op: 'log1p', feature: { source: 'item', name: 'price' } },
      { op: 'bucketize', feature: { source: 'item', name: 'price' }, boundaries: [5, 20] },
    ],
  },
];

const values = new FeatureValues(features, inputs);

const ids = ['item-a', 'item-b', 'item-c'];
const frame: FeatureFrame = {
  userId: 'u1',
  userRequest: { age: 42 },
  userStored: undefined,
  context: { device: 'ios' },
  itemIds: ids,
  itemRequest: [{ price: 3 }, undefined, undefined],
  itemStored: [{ category: 'toys' }, { price: 25, category: 'books' }, undefined],
};

/** Expected value of column `c` of `input` at `row`, straight from compileColumn. */
const cell = (input: ModelInputSpec, c: number, row: number) => {
  const column = compileColumn(input.columns[c], values);
  column.prepare?.(frame);
  return column.compute(frame, row);
};

describe('TensorBuilder', () => {
  const feeds = new TensorBuilder(inputs, values).build(frame);

  it('builds one feed per input, named as declared', () => {
    expect(Object.keys(feeds)).toEqual(['sparse_ids', 'dense']);
  });

  it('builds an int64 tensor of [rows, columns] in a BigInt64Array', () => {
    const t = feeds.sparse_ids;
    expect(t.dtype).toBe('int64');
    expect(t.dims).toEqual([3, 4]);
    expect(t.data).toBeInstanceOf(BigInt64Array);
    expect(t.data).toHaveLength(12);
  });

  it('builds a float32 tensor of [rows, columns] in a Float32Array', () => {
    const t = feeds.dense;
    expect(t.dtype).toBe('float32');
    expect(t.dims).toEqual([3, 3]);
    expect(t.data).toBeInstanceOf(Float32Array);
    expect(t.data).toHaveLength(9);
  });

  it('writes int64 values row-major that read back as the right BigInts', () => {
    const data = feeds.sparse_ids.data as BigInt64Array;
    const [sparse] = inputs;
    for (let row = 0; row < 3; row++) {
      for (let c = 0; c < 4; c++) {
        expect(data[row * 4 + c]).toBe(BigInt(cell(sparse, c, row)));
      }
    }
    expect(data[0]).toBe(BigInt(fnv1a32('item-a') % MAX_BUCKETS));
    expect(data[4]).toBe(BigInt(fnv1a32('item-b') % MAX_BUCKETS));
  });

  it('keeps int64 values non-negative and exact in the top half of the 31-bit range', () => {
    const data = feeds.sparse_ids.data as BigInt64Array;
    for (const v of data) {
      expect(v).toBeGreaterThanOrEqual(0n);
      expect(v).toBeLessThan(BigInt(MAX_BUCKETS));
    }
    // A long run of item ids so that some hashes land in the top half of the 31-bit range.
    const many = Array.from({ length: 64 }, (_, i) => `item-${i}`);
    const big = new TensorBuilder([inputs[0]], values).build({
      ...frame,
      itemIds: many,
      itemRequest: many.map(() => undefined),
      itemStored: many.map(() => undefined),
    }).sparse_ids.data as BigInt64Array;
    const firstColumn = many.map((_, row) => big[row * 4]);
    expect(firstColumn).toEqual(many.map((id) => BigInt(fnv1a32(id) % MAX_BUCKETS)));
    expect(firstColumn.some((v) => v >= 2n ** 30n)).toBe(true);
  });

  it('writes float32 values row-major', () => {
    const data = feeds.dense.data as Float32Array;
    const [, dense] = inputs;
    for (let row = 0; row < 3; row++) {
      for (let c = 0; c < 3; c++) {
        expect(data[row * 3 + c]).toBe(Math.fround(cell(dense, c, row)));
      }
    }
    expect(Array.from(data.filter((_, i) => i % 3 === 2))).toEqual([0, 2, 0]); // prices 3, 25, 0
  });

  it('tiles user and context columns down every row', () => {
    const sparse = feeds.sparse_ids.data as BigInt64Array;
    const dense = feeds.dense.data as Float32Array;
    for (let row = 0; row < 3; row++) {
      expect(sparse[row * 4 + 1]).toBe(2n); // age 42 in [30, 50)
      expect(sparse[row * 4 + 2]).toBe(BigInt(fnv1a32('ios') % MAX_BUCKETS));
      expect(dense[row * 3]).toBe(Math.fround((42 - 35) / 3));
    }
  });

  it('computes item columns per row', () => {
    const sparse = feeds.sparse_ids.data as BigInt64Array;
    const crosses = [0, 1, 2].map((row) => sparse[row * 4 + 3]);
    expect(new Set(crosses).size).toBeGreaterThan(1);
  });

  it('builds empty tensors for a request without candidates', () => {
    const empty = new TensorBuilder(inputs, values).build({
      ...frame,
      itemIds: [],
      itemRequest: [],
      itemStored: [],
    });
    expect(empty.sparse_ids.dims).toEqual([0, 4]);
    expect(empty.sparse_ids.data).toHaveLength(0);
    expect(empty.dense.dims).toEqual([0, 3]);
    expect(empty.dense.data).toHaveLength(0);
  });

  it('builds fresh arrays on every call', () => {
    const builder = new TensorBuilder(inputs, values);
    const a = builder.build(frame);
    const b = builder.build(frame);
    expect(a.dense.data).not.toBe(b.dense.data);
    expect(a.dense.data).toEqual(b.dense.data);
    expect(a.sparse_ids.data).toEqual(b.sparse_ids.data);
  });

  it('builds the same tensors in given buffers of any content and length as in fresh ones', () => {
    const many = Array.from({ length: 50 }, (_, i) => `item-${i}`);
    const wide: FeatureFrame = {
      ...frame,
      itemIds: many,
      itemRequest: many.map((_, i) => (i % 7 === 0 ? { price: i } : undefined)),
      itemStored: many.map((_, i) =>
        i % 3 === 0 ? undefined : { price: i, category: `c${i % 4}` },
      ),
    };
    const fresh = new TensorBuilder(inputs, values).build(wide);
    const given: ArrayBuffer[] = [];
    // Every byte set (every int64 high word -1, every float NaN), and longer than asked.
    const dirty = (byteLength: number) => {
      const buffer = new ArrayBuffer(byteLength + 64);
      new Uint8Array(buffer).fill(0xff);
      given.push(buffer);
      return buffer;
    };
    const built = new TensorBuilder(inputs, values).build(wide, dirty);
    expect(given).toHaveLength(2);
    expect(built.sparse_ids.data.buffer).toBe(given[0]);
    expect(built.dense.data.buffer).toBe(given[1]);
    expect(built.sparse_ids.data).toHaveLength(50 * 4);
    expect(built.sparse_ids.data).toEqual(fresh.sparse_ids.data);
    expect(built.dense.data).toEqual(fresh.dense.data);
  });

  it('copies an input built for the same scoring instead of reading its features again', () => {
    const reports: string[] = [];
    // A user value every build reads again (user columns are computed per build): each read of
    // it is reported.
    const bad = (): FeatureFrame => ({
      ...frame,
      userRequest: { age: 'old' },
      onBadValue: (source, layer, row, feature) => reports.push(`${source}.${feature}`),
    });
    const items = new ItemRowCache();
    const first = new TensorBuilder(inputs, values, items);
    const second = new TensorBuilder([inputs[1]], values, items);
    const alone = first.build(bad());
    const byFirst = reports.length;
    expect(byFirst).toBeGreaterThan(0);
    reports.length = 0;
    const built: BuiltInputs = new Map();
    const frameOfBoth = bad();
    const a = first.build(frameOfBoth, undefined, built);
    const b = second.build(frameOfBoth, undefined, built);
    // The second model's dense input is a copy of the first's: nothing read, nothing reported.
    expect(reports).toHaveLength(byFirst);
    expect(b.dense.data).toEqual(a.dense.data);
    expect(b.dense.data).toEqual(alone.dense.data);
    expect(b.dense.data.buffer).not.toBe(a.dense.data.buffer);
  });

  it('keeps item-only values with the row object: a changed row is recomputed', () => {
    const builder = new TensorBuilder(inputs, values);
    const stored = { price: 4, category: 'toys' };
    const at = (f: FeatureFrame) => Array.from(builder.build(f).dense.data as Float32Array);
    const single = (row: typeof stored, id = 'item-x'): FeatureFrame => ({
      ...frame,
      itemIds: [id],
      itemRequest: [undefined],
      itemStored: [row],
    });
    const first = at(single(stored));
    expect(at(single(stored))).toEqual(first);
    const updated = { ...stored, price: 400 };
    expect(at(single(updated))[1]).toBeCloseTo(Math.log1p(400), 5);
    // The same row object under another id is not mistaken for the first item.
    const sparse = (f: FeatureFrame) => builder.build(f).sparse_ids.data as BigInt64Array;
    expect(sparse(single(stored, 'item-y'))[0]).toBe(BigInt(fnv1a32('item-y') % MAX_BUCKETS));
  });

  describe('every path equals each column computed on its own', () => {
    const ref = (source: 'user' | 'item' | 'context', name: string) => ({ source, name });
    const paths: ModelInputSpec[] = [
      {
        name: 'ids',
        dtype: 'int64',
        columns: [
          // user x item cross (kept item key), its twin (shared key), a cross with two item
          // values after the user's (joined key), one led by the item (computed per row).
          { op: 'cross', features: [ref('user', 'id'), ref('item', 'category')], buckets: 997 },
          {
            op: 'cross',
            features: [ref('context', 'device'), ref('item', 'category')],
            buckets: 13,
          },
          {
            op: 'cross',
            features: [ref('user', 'id'), ref('item', 'category'), ref('item', 'id')],
            buckets: MAX_BUCKETS,
          },
          { op: 'cross', features: [ref('item', 'category'), ref('user', 'id')], buckets: 1000 },
          { op: 'hash', feature: ref('item', 'category'), buckets: 50 },
          { op: 'hash', feature: ref('context', 'device'), buckets: 50 },
        ],
      },
      {
        name: 'dense',
        dtype: 'float32',
        columns: [
          { op: 'match', features: [ref('context', 'device'), ref('item', 'category')] },
          { op: 'match', features: [ref('item', 'category'), ref('context', 'device')] },
          { op: 'log1p', feature: ref('item', 'price') },
          { op: 'standardize', feature: ref('user', 'age'), mean: 30, std: 5 },
        ],
      },
      {
        // Item-only columns in runs (copied a run at a time, see cellRuns): two side by side
        // whose slots are new, one whose slot another input took first (its run breaks), a
        // context column between, then two more.
        name: 'runs',
        dtype: 'int64',
        columns: [
          { op: 'hash', feature: ref('item', 'id'), buckets: 101 },
          { op: 'bucketize', feature: ref('item', 'price'), boundaries: [1, 3, 5] },
          { op: 'hash', feature: ref('item', 'category'), buckets: 50 },
          { op: 'hash', feature: ref('context', 'device'), buckets: 7 },
          { op: 'hash', feature: ref('item', 'id'), buckets: 103 },
          { op: 'hash', feature: ref('item', 'category'), buckets: 51 },
        ],
      },
      {
        name: 'floatRuns',
        dtype: 'float32',
        columns: [
          { op: 'standardize', feature: ref('item', 'price'), mean: 3, std: 2 },
          { op: 'log1p', feature: ref('item', 'price') },
          { op: 'standardize', feature: ref('user', 'age'), mean: 30, std: 5 },
          { op: 'identity', feature: ref('item', 'price') },
        ],
      },
    ];
    const pathValues = new FeatureValues(features, paths);
    const n = 257;
    const itemIds = Array.from({ length: n }, (_, i) => `it-${i}`);
    const categories = ['toys', 'books', 'ios', 'bö\u00fccher', ''];
    const stored = itemIds.map((_, i) =>
      i % 11 === 0 ? undefined : { category: categories[i % 5], price: i % 7 },
    );
    const many: FeatureFrame = {
      ...frame,
      context: { device: 'ios' },
      itemIds,
      itemRequest: itemIds.map((_, i) =>
        i % 13 === 0 ? { category: `sent-${i % 3}` } : undefined,
      ),
      itemStored: stored,
    };

    /** Every cell of `feeds` equals the column computed on its own. */
    const expectCells = (specs: ModelInputSpec[], feeds: InputFeeds) => {
      for (const input of specs) {
        const width = input.columns.length;
        input.columns.forEach((spec, c) => {
          const column = compileColumn(spec, pathValues);
          column.prepare?.(many);
          for (let row = 0; row < n; row++) {
            const expected = column.compute(many, row);
            const got = Number(feeds[input.name].data[row * width + c]);
            expect([input.name, c, row, got]).toEqual([
              input.name,
              c,
              row,
              input.dtype === 'float32' ? Math.fround(expected) : expected,
            ]);
          }
        });
      }
    };

    /** The same inputs with other bucket counts: a second model reading the same item side. */
    const other: ModelInputSpec[] = paths.map((input) => ({
      ...input,
      columns: input.columns.map((c) => ('buckets' in c ? { ...c, buckets: c.buckets - 1 } : c)),
    }));

    it('for two models sharing one item side (other bucket counts, same keys)', () => {
      const items = new ItemRowCache();
      const first = new TensorBuilder(paths, pathValues, items);
      const second = new TensorBuilder(other, pathValues, items);
      for (let round = 0; round < 2; round++) {
        expectCells(paths, first.build(many));
        expectCells(other, second.build(many));
      }
    });

    it('for two models sharing built inputs: an equal input is copied, another built', () => {
      // Same dtype and columns, another name and place: still one signature.
      const moved: ModelInputSpec[] = [{ ...paths[paths.length - 1], name: 'copied' }, ...other];
      const equal = paths.filter((input) => !input.columns.some((c) => 'buckets' in c));
      expect(equal.length).toBeGreaterThan(0);
      const items = new ItemRowCache();
      const first = new TensorBuilder(paths, pathValues, items);
      const second = new TensorBuilder(moved, pathValues, items);
      for (let round = 0; round < 2; round++) {
        const built: BuiltInputs = new Map();
        const a = first.build(many, undefined, built);
        const b = second.build(many, undefined, built);
        expectCells(paths, a);
        expectCells(moved, b);
        expect(b.copied.data).toEqual(a[paths[paths.length - 1].name].data);
        expect(b.copied.data.buffer).not.toBe(a[paths[paths.length - 1].name].data.buffer);
        for (const input of equal) expect(b[input.name].data).toEqual(a[input.name].data);
      }
    });

    it('on three builds of the same rows (the later ones from kept values)', () => {
      const builder = new TensorBuilder(paths, pathValues);
      for (let round = 0; round < 3; round++) expectCells(paths, builder.build(many));
    });
  });

  describe('cellRuns', () => {
    it('joins columns side by side that read slots side by side, in elements of the row', () => {
      const columns = [
        { col: 2, slot: 0 },
        { col: 3, slot: 1 },
        { col: 4, slot: 2 },
        { col: 5, slot: 7 },
        { col: 7, slot: 8 },
        { col: 8, slot: 9 },
      ];
      expect([...cellRuns(columns, 1)]).toEqual([2, 0, 3, 5, 7, 1, 7, 8, 2]);
      expect([...cellRuns(columns, 2)]).toEqual([4, 0, 3, 10, 7, 1, 14, 8, 2]);
    });

    it('makes no runs of no columns, and one run a column when nothing is side by side', () => {
      expect([...cellRuns([], 2)]).toEqual([]);
      expect([
        ...cellRuns(
          [
            { col: 0, slot: 3 },
            { col: 1, slot: 2 },
          ],
          1,
        ),
      ]).toEqual([0, 3, 1, 1, 2, 1]);
    });
  });

  describe('typed values in the built tensors', () => {
    const builder = new TensorBuilder(inputs, values);
    const both = (f: FeatureFrame) => {
      const feeds = builder.build(f);
      return [
        Array.from(feeds.sparse_ids.data as BigInt64Array),
        Array.from(feeds.dense.data as Float32Array),
      ];
    };
    const clean: FeatureFrame = {
      ...frame,
      userRequest: { age: 42 },
      itemRequest: [{ price: 3 }, undefined, undefined],
    };

    it('falls back from an unusable request value to the stored one, for users and items', () => {
      const reports: string[] = [];
      const messy: FeatureFrame = {
        ...frame,
        userRequest: { age: 'forty-two' },
        userStored: { age: '42.0' },
        itemRequest: [{ price: 'cheap' }, { price: '' }, undefined],
        itemStored: [{ category: 'toys', price: 3 }, { price: 25, category: 'books' }, undefined],
        onBadValue: (source, layer, row, feature) =>
          reports.push(`${source}:${layer}:${row}:${feature}`),
      };
      expect(both(messy)).toEqual(both(clean));
      expect(new Set(reports)).toEqual(
        new Set(['user:request:0:age', 'item:request:0:price', 'item:request:1:price']),
      );
    });

    it('reads numeric strings and booleans in every column as their numbers', () => {
      const sent: FeatureFrame = {
        ...clean,
        userRequest: { age: ' 42 ' },
        itemRequest: [{ price: '3.0' }, { price: 25 }, { price: false }],
      };
      const plain: FeatureFrame = {
        ...clean,
        itemRequest: [{ price: 3 }, { price: 25 }, { price: 0 }],
      };
      expect(both(sent)).toEqual(both(plain));
    });

    it('never writes a non-finite float: a value overflowing its column takes the next layer', () => {
      const huge: FeatureFrame = { ...clean, userRequest: { age: 1e308 }, userStored: { age: 42 } };
      const [, dense] = both(huge);
      for (const v of dense) expect(Number.isFinite(v)).toBe(true);
      expect(both(huge)).toEqual(both(clean));
    });
  });
});
