import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { FeatureRow } from '@app/features';
import { BundleSpec, ModelInputSpec } from '../bundle/bundle-definition';
import { FeatureFrame } from './feature-frame';
import { FeatureValues } from './feature-values';
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

  it('reuses the arena slots of collected rows instead of growing', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const items = new ItemRowCache();
    const builder = new TensorBuilder(inputs, values, items);
    const arenaLength = () => (items as unknown as { arena: Float64Array }).arena.length;
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
});
