import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { FeatureRow, ItemHolder } from '@app/features';
import { BundleSpec, ModelInputSpec } from '../bundle/bundle-definition';
import { FeatureFrame } from './feature-frame';
import { FeatureValues } from './feature-values';
import { ItemArena } from './item-arena';
import { ItemRowCache } from './item-row-cache';
import { TensorBuilder } from './tensor-builder';

const features: BundleSpec['features'] = {
  user: {},
  item: { price: { type: 'number', default: -1 }, rating: { type: 'number', default: -2 } },
  context: {},
};

/** Item-only columns: what the arena holds (price and rating as they are). */
const inputs: ModelInputSpec[] = [
  {
    name: 'x',
    dtype: 'float32',
    columns: [
      { op: 'identity', feature: { source: 'item', name: 'price' } },
      { op: 'identity', feature: { source: 'item', name: 'rating' } },
    ],
  },
];

type Row = { price: number; rating: number };

/** A match of the user's favourite category with the item's: one item key, `item.category`. */
const keyedFeatures: BundleSpec['features'] = {
  user: { fav: { type: 'string', default: '' } },
  item: { category: { type: 'string', default: 'none' } },
  context: {},
};
const keyedInputs: ModelInputSpec[] = [
  {
    name: 'x',
    dtype: 'float32',
    columns: [
      {
        op: 'match',
        features: [
          { source: 'user', name: 'fav' },
          { source: 'item', name: 'category' },
        ],
      },
    ],
  },
];

function keyedFrame(
  categories: (string | undefined)[],
  sent: (string | undefined)[] = [],
  rows = categories.map((category) => (category === undefined ? undefined : { category })),
): FeatureFrame {
  return {
    userId: 'u',
    userRequest: undefined,
    userStored: { fav: 'b' },
    context: undefined,
    itemIds: categories.map((_, i) => `item-${i}`),
    itemRequest: sent.map((category) => (category === undefined ? undefined : { category })),
    itemStored: rows,
  };
}

/** Each row's match value, and the request's distinct keys as the builder listed them. */
function matched(items: ItemRowCache, builder: TensorBuilder, frame: FeatureFrame) {
  const data = builder.build(frame).x.data as Float32Array;
  const [{ distinct, index }] = items.forRequest(frame).keys;
  return {
    values: Array.from(data),
    keys: Array.from(index, (k) => distinct[k]),
    distinct: distinct.length,
  };
}

/** The item side's memory, read (and in two cases emptied) by the specs. */
function arenaOf(items: ItemRowCache): ItemArena {
  return (items as unknown as { arena: ItemArena }).arena;
}

function frameOf(rows: (Row | undefined)[], sent: (Row | undefined)[] = []): FeatureFrame {
  return {
    userId: 'u',
    userRequest: undefined,
    userStored: undefined,
    context: undefined,
    itemIds: rows.map((_, i) => `item-${i}`),
    itemRequest: rows.map((_, i) => sent[i]),
    itemStored: rows,
  };
}

/** [price, rating] of each row, as built. */
function built(builder: TensorBuilder, frame: FeatureFrame): number[][] {
  const data = builder.build(frame).x.data as Float32Array;
  return frame.itemIds.map((_, r) => [data[r * 2], data[r * 2 + 1]]);
}

function rowsOf(n: number, from = 0): Row[] {
  return Array.from({ length: n }, (_, i) => ({ price: from + i, rating: (from + i) % 5 }));
}

describe('ItemRowCache', () => {
  const values = new FeatureValues(features, inputs);

  it('keeps thousands of rows side by side as the arena grows, within a request and between', () => {
    const builder = new TensorBuilder(inputs, values);
    const rows = rowsOf(2600);
    const expected = rows.map((r) => [r.price, r.rating]);
    // 1,300 rows, then all 2,600 (growing past 2,048 slots in one request), then again, kept.
    expect(built(builder, frameOf(rows.slice(0, 1300)))).toEqual(expected.slice(0, 1300));
    expect(built(builder, frameOf(rows))).toEqual(expected);
    const shuffled = rows.map((_, i) => rows[(i * 7919) % rows.length]);
    expect(built(builder, frameOf(shuffled))).toEqual(shuffled.map((r) => [r.price, r.rating]));
  });

  it('computes rows with request features, absent rows and a row object under another id on their own', () => {
    const builder = new TensorBuilder(inputs, values);
    const rows = rowsOf(4);
    built(builder, frameOf(rows));
    const mixed: (Row | undefined)[] = [rows[0], undefined, rows[2], rows[3]];
    const sent = [undefined, undefined, { price: 99, rating: 9 }, undefined];
    expect(built(builder, frameOf(mixed, sent))).toEqual([
      [0, 0],
      [-1, -2],
      [99, 9],
      [3, 3],
    ]);
    // rows[1] kept as item-1's: under id item-0 (first position) it is not taken for item-1's
    // values, and keeping item-1's values is not disturbed.
    const swapped = frameOf([rows[1], rows[1]]);
    expect(built(builder, swapped)).toEqual([
      [1, 1],
      [1, 1],
    ]);
    expect(built(builder, frameOf(rows))).toEqual(rows.map((r) => [r.price, r.rating]));
  });

  it('warms rows ahead of requests, leaving a row with an unusable value for a request to report', async () => {
    const items = new ItemRowCache();
    const builder = new TensorBuilder(inputs, values, items);
    const rows = rowsOf(600);
    const odd = { price: 'abc', rating: 4 } as unknown as Row;
    const held: [string, FeatureRow][] = [...rows, odd].map((row, i) => [`item-${i}`, row]);
    expect(await items.warm(held, 100)).toBe(600);
    // Warmed rows are kept: computing them again would call onBadValue for none, so count calls
    // through the one row left out.
    const reported: number[] = [];
    const frame = {
      ...frameOf([...rows, odd]),
      onBadValue: (_s: unknown, _l: unknown, row: number) => reported.push(row),
    };
    expect(built(builder, frame)).toEqual([...rows.map((r) => [r.price, r.rating]), [-1, 4]]);
    expect(reported).toEqual([600]);
    // Warming again keeps nothing new.
    expect(await items.warm(held, 100)).toBe(0);
  });

  it('keeps each value as the inputs it feeds hold it: the same tensors as computed afresh', () => {
    // One column in a float32 and an int64 input: values a float32 rounds (2^24 + 1, 0.1) and
    // an int64 truncates (2.7, -2.7), beside plain ones.
    const column = { op: 'identity', feature: { source: 'item', name: 'price' } } as const;
    const both: ModelInputSpec[] = [
      { name: 'f', dtype: 'float32', columns: [column] },
      { name: 'i', dtype: 'int64', columns: [column] },
    ];
    const prices = [2 ** 24 + 1, 0.1, 2.7, -2.7, 3, 2 ** 31 - 1];
    const rows = prices.map((price) => ({ price, rating: 0 }));
    const tensors = (frame: FeatureFrame) => {
      const feeds = new TensorBuilder(both, new FeatureValues(features, both), items).build(frame);
      return [Array.from(feeds.f.data as Float32Array), Array.from(feeds.i.data as BigInt64Array)];
    };
    const items = new ItemRowCache();
    // int64 inputs are written as their low words (ids are below 2^31: see TensorBuilder).
    const expected = [prices.map((p) => Math.fround(p)), prices.map((p) => BigInt((p | 0) >>> 0))];
    // Computed and kept, then read back from the kept cells, then computed for the request alone
    // (request features: the request's own cells).
    expect(tensors(frameOf(rows))).toEqual(expected);
    expect(tensors(frameOf(rows))).toEqual(expected);
    expect(tensors(frameOf(rows, rows))).toEqual(expected);
  });

  it('reuses the arena slots of collected rows instead of growing', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const items = new ItemRowCache();
    const builder = new TensorBuilder(inputs, values, items);
    const arenaLength = () => arenaOf(items).cells.ints.length;
    for (let round = 0; round < 6; round++) {
      // 1,000 new row objects per round (an item cache refreshing): the old ones die.
      const rows = rowsOf(1000, round * 1000);
      expect(built(builder, frameOf(rows))).toEqual(rows.map((r) => [r.price, r.rating]));
      gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
    // Without reuse 6,000 rows would have grown it to 8,192 slots of 2 values.
    expect(arenaLength()).toBeLessThan(8192 * 2);
  });

  it('is shared by bundles of the same features and inputs while one of them holds it', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const a = ItemRowCache.forInputs('spec-a');
    expect(a.shared).toBe(false);
    expect(ItemRowCache.forInputs('spec-a')).toEqual({ items: a.items, shared: true });
    expect(ItemRowCache.forInputs('spec-b').items).not.toBe(a.items);
    // Once no bundle holds it, a bundle of the same inputs gets a new one.
    const made = new WeakRef(ItemRowCache.forInputs('spec-c').items);
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(made.deref()).toBeUndefined();
    expect(ItemRowCache.forInputs('spec-c').shared).toBe(false);
  });

  it('lists the distinct item keys of each request: kept rows by code, rows of its own by string', () => {
    const items = new ItemRowCache();
    const builder = new TensorBuilder(
      keyedInputs,
      new FeatureValues(keyedFeatures, keyedInputs),
      items,
    );
    const stored = ['a', 'b', 'a', 'c', undefined, 'b'];
    const rows = stored.map((category) => (category === undefined ? undefined : { category }));
    // Twice over the same (then kept) rows: the second request lists keys from codes alone.
    for (let pass = 0; pass < 2; pass++) {
      expect(matched(items, builder, keyedFrame(stored, [], rows))).toEqual({
        values: [0, 1, 0, 0, 0, 1],
        keys: ['a', 'b', 'a', 'c', 'none', 'b'],
        distinct: 4,
      });
    }
    // Rows with request features are the request's own: listed by their strings, beside kept
    // rows with the same string, and each gets its own value.
    expect(matched(items, builder, keyedFrame(stored, [undefined, 'a', 'b'], rows))).toEqual({
      values: [0, 0, 1, 0, 0, 1],
      keys: ['a', 'a', 'b', 'c', 'none', 'b'],
      distinct: 6,
    });
    // A request of other rows lists only its own keys: marks of earlier requests do not count.
    expect(matched(items, builder, keyedFrame(['c', 'd', 'c']))).toEqual({
      values: [0, 0, 0],
      keys: ['c', 'd', 'c'],
      distinct: 2,
    });
  });

  it('lists keys right across serials starting over', () => {
    const items = new ItemRowCache();
    const builder = new TensorBuilder(
      keyedInputs,
      new FeatureValues(keyedFeatures, keyedInputs),
      items,
    );
    const rows = ['a', 'b', 'a'].map((category) => ({ category }));
    const frame = () => keyedFrame(['a', 'b', 'a'], [], rows);
    matched(items, builder, frame());
    (items as unknown as { listing: { serial: number } }).listing.serial = 0x7fffffff - 1;
    for (let request = 0; request < 3; request++) {
      expect(matched(items, builder, frame())).toEqual({
        values: [0, 1, 0],
        keys: ['a', 'b', 'a'],
        distinct: 2,
      });
    }
    expect((items as unknown as { listing: { serial: number } }).listing.serial).toBe(2);
  });

  it('starts over once key codes outnumber what its rows can hold, and stays right', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const items = new ItemRowCache();
    const builder = new TensorBuilder(
      keyedInputs,
      new FeatureValues(keyedFeatures, keyedInputs),
      items,
    );
    const state = arenaOf(items);
    const arenas = new Set<number>();
    let most = 0;
    // 5,000 new rows with a key of their own per round (per-item keys under a churning cache):
    // their slots are reused, their codes are not, until the arena starts over.
    for (let round = 0; round < 30; round++) {
      const categories = Array.from({ length: 5000 }, (_, i) => `k${round * 5000 + i}`);
      categories[0] = 'b';
      const { values, keys } = matched(items, builder, keyedFrame(categories));
      expect(keys).toEqual(categories);
      expect(values[0]).toBe(1);
      expect(values.slice(1).every((v) => v === 0)).toBe(true);
      most = Math.max(most, state.texts.length);
      arenas.add(state.token);
      gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
    // Started over after the first arena at least once.
    expect(arenas.size).toBeGreaterThan(1);
    // Bounded by twice the arena's keys (a few thousand slots) plus the spare, not 150,000.
    expect(most).toBeLessThan(100_000);
  });

  describe("with the store's holders of the rows", () => {
    const holderOf = (row: FeatureRow): ItemHolder => ({
      row,
      memoRow: undefined,
      memoKey: 0,
      memoValue: 0,
    });
    const withHolders = (frame: FeatureFrame, holders: ItemHolder[]): FeatureFrame => ({
      ...frame,
      itemHolders: holders,
    });

    it("finds kept rows through the holders' memos, without looking them up again", () => {
      const items = new ItemRowCache();
      const builder = new TensorBuilder(inputs, values, items);
      const rows = rowsOf(300);
      const holders: ItemHolder[] = rows.map(holderOf);
      const frame = withHolders(frameOf(rows), holders);
      const expected = rows.map((r) => [r.price, r.rating]);
      expect(built(builder, frame)).toEqual(expected);
      expect(holders.every((h) => h.memoRow === h.row && h.memoKey !== 0)).toBe(true);
      // With the lookup by row emptied, the memos alone find every row: nothing is computed or
      // kept again.
      const state = arenaOf(items);
      const slots = state.rows;
      (state as unknown as { kept: WeakMap<object, unknown> }).kept = new WeakMap();
      expect(built(builder, withHolders(frameOf(rows), holders))).toEqual(expected);
      expect(state.rows).toBe(slots);
    });

    it("takes the memos the fetch read, then the holders' own, before any lookup", () => {
      const items = new ItemRowCache();
      const builder = new TensorBuilder(inputs, values, items);
      const rows = rowsOf(300);
      const holders: ItemHolder[] = rows.map(holderOf);
      built(builder, withHolders(frameOf(rows), holders));
      // The memos as a fetch reads them (see InMemoryFeatureStore.fetch), for holders that no
      // longer have any, with the lookup by row emptied: the fetch's copies alone find every row.
      const memos = {
        keys: Int32Array.from(holders, (h) => h.memoKey),
        values: Int32Array.from(holders, (h) => h.memoValue),
      };
      const state = arenaOf(items);
      const slots = state.rows;
      (state as unknown as { kept: WeakMap<object, unknown> }).kept = new WeakMap();
      const expected = rows.map((r) => [r.price, r.rating]);
      const bare = rows.map(holderOf);
      expect(built(builder, { ...withHolders(frameOf(rows), bare), itemMemos: memos })).toEqual(
        expected,
      );
      expect(state.rows).toBe(slots);
      // A copy of another consumer's memo (another key) sends each row to its holder's memo.
      const stale = { keys: new Int32Array(300).fill(-1), values: new Int32Array(300) };
      expect(built(builder, { ...withHolders(frameOf(rows), holders), itemMemos: stale })).toEqual(
        expected,
      );
      expect(state.rows).toBe(slots);
    });

    it('takes a memo only for the same row object and the same arena', () => {
      const items = new ItemRowCache();
      const builder = new TensorBuilder(inputs, values, items);
      const rows = rowsOf(3);
      const holders: ItemHolder[] = rows.map(holderOf);
      built(builder, withHolders(frameOf(rows), holders));
      // A store that handed out a holder with a memo for another row than the one fetched.
      const updated = [{ price: 50, rating: 1 }, rows[1], rows[2]];
      expect(built(builder, withHolders(frameOf(updated), holders))).toEqual([
        [50, 1],
        [1, 1],
        [2, 2],
      ]);
      // Another bundle's item side (its own arena, other columns) over the same holders.
      const other: ModelInputSpec[] = [
        {
          name: 'x',
          dtype: 'float32',
          columns: [{ op: 'identity', feature: { source: 'item', name: 'rating' } }],
        },
      ];
      const otherBuilder = new TensorBuilder(other, new FeatureValues(features, other));
      const data = otherBuilder.build(withHolders(frameOf(rows), holders)).x.data as Float32Array;
      expect(Array.from(data)).toEqual([0, 1, 2]);
      // And back: each side finds its own values whoever wrote the memo last.
      expect(built(builder, withHolders(frameOf(rows), holders))).toEqual(
        rows.map((r) => [r.price, r.rating]),
      );
    });

    it('never leaves a memo on a holder for a row object kept under another id', () => {
      const items = new ItemRowCache();
      const builder = new TensorBuilder(inputs, values, items);
      const rows = rowsOf(2);
      const shared = [rows[1], rows[1]];
      const holders: ItemHolder[] = shared.map(holderOf);
      // rows[1] is kept under item-0 first (its first position), then met under item-1.
      expect(built(builder, withHolders(frameOf(shared), holders))).toEqual([
        [1, 1],
        [1, 1],
      ]);
      expect(holders[0].memoRow).toBe(rows[1]);
      expect(holders[1].memoRow).toBeUndefined();
    });
  });
});
