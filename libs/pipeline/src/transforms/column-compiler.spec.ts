import { FeatureRow } from '@app/features';
import { BundleSpec, ColumnSpec, FeatureRef } from '../bundle/bundle-definition';
import { compileColumn } from './column-compiler';
import { FeatureFrame } from './feature-frame';
import { CROSS_SEPARATOR, fnv1a32 } from './feature-hash';

const features: BundleSpec['features'] = {
  user: {
    age: { type: 'number', default: 30 },
    gender: { type: 'string', default: 'x' },
    fav: { type: 'string', default: 'none' },
    level: { type: 'number', default: 1 },
  },
  item: {
    category: { type: 'string', default: 'unknown' },
    price: { type: 'number', default: 7 },
  },
  context: {
    hour: { type: 'number', default: 12 },
    device: { type: 'string', default: 'web' },
  },
};

const user = (name: string): FeatureRef => ({ source: 'user', name });
const item = (name: string): FeatureRef => ({ source: 'item', name });
const context = (name: string): FeatureRef => ({ source: 'context', name });

function frame(
  parts: {
    user?: FeatureRow;
    context?: FeatureRow;
    items?: { id: string; request?: FeatureRow; stored?: FeatureRow }[];
  } = {},
): FeatureFrame {
  const items = parts.items ?? [{ id: 'i1' }];
  return {
    user: { id: 'u1', ...parts.user },
    context: parts.context ?? {},
    itemIds: items.map((i) => i.id),
    itemRequest: items.map((i) => i.request),
    itemStored: items.map((i) => i.stored),
  };
}

/** The column's value for every row of the frame. */
function values(column: ColumnSpec, f: FeatureFrame): number[] {
  const compiled = compileColumn(column, features);
  compiled.prepare?.(f);
  return f.itemIds.map((_, row) => compiled.compute(f, row));
}

/** The column's value for one item carrying `stored` features. */
const forItem = (column: ColumnSpec, stored: FeatureRow) =>
  values(column, frame({ items: [{ id: 'i1', stored }] }))[0];

describe('compileColumn', () => {
  describe('hash', () => {
    const column = (buckets: number, ref = item('category')): ColumnSpec => ({
      op: 'hash',
      feature: ref,
      buckets,
    });

    it('is the FNV-1a hash of the value modulo the bucket count', () => {
      expect(forItem(column(1000), { category: 'shoes' })).toBe(fnv1a32('shoes') % 1000);
    });

    it('stays within [0, buckets) for many values', () => {
      const items = Array.from({ length: 500 }, (_, i) => ({
        id: `i${i}`,
        stored: { category: `cat-${i}` },
      }));
      for (const buckets of [1, 7, 1000, 2 ** 31 - 1]) {
        for (const v of values(column(buckets), frame({ items }))) {
          expect(Number.isInteger(v)).toBe(true);
          expect(v).toBeGreaterThanOrEqual(0);
          expect(v).toBeLessThan(buckets);
        }
      }
    });

    it('puts everything in bucket 0 when there is one bucket', () => {
      expect(forItem(column(1), { category: 'anything' })).toBe(0);
    });

    it('is stable: the same value gets the same bucket in any row and any compilation', () => {
      const f = frame({
        items: [
          { id: 'a', stored: { category: 'toys' } },
          { id: 'b', stored: { category: 'books' } },
          { id: 'c', stored: { category: 'toys' } },
        ],
      });
      const first = values(column(2 ** 31 - 1), f);
      expect(first[0]).toBe(first[2]);
      expect(first[0]).not.toBe(first[1]);
      expect(values(column(2 ** 31 - 1), f)).toEqual(first);
    });

    it('hashes item.id from the candidate ids', () => {
      const f = frame({ items: [{ id: 'item-1' }, { id: 'item-2' }] });
      expect(values(column(997, item('id')), f)).toEqual([
        fnv1a32('item-1') % 997,
        fnv1a32('item-2') % 997,
      ]);
    });

    it('hashes user.id from the frame', () => {
      const f = frame({ user: { id: 'user-9' } });
      expect(values(column(997, user('id')), f)).toEqual([fnv1a32('user-9') % 997]);
    });

    it('hashes a number by its string form', () => {
      const f = frame({ user: { level: 3 }, context: { hour: 0.5 } });
      expect(values(column(1000, user('level')), f)).toEqual([fnv1a32('3') % 1000]);
      expect(values(column(1000, context('hour')), f)).toEqual([fnv1a32('0.5') % 1000]);
    });

    it('hashes the declared default when the feature is missing', () => {
      expect(forItem(column(1000), {})).toBe(fnv1a32('unknown') % 1000);
      expect(values(column(1000, context('hour')), frame())).toEqual([fnv1a32('12') % 1000]);
    });
  });

  describe('cross', () => {
    const cross = (...refs: FeatureRef[]): ColumnSpec => ({
      op: 'cross',
      features: refs,
      buckets: 2 ** 31 - 1,
    });
    const f = frame({
      user: { gender: 'f', fav: 'toys' },
      context: { device: 'ios' },
      items: [{ id: 'i1', stored: { category: 'toys' } }],
    });

    it('hashes the values joined by the cross separator', () => {
      expect(values(cross(user('gender'), item('category')), f)).toEqual([
        fnv1a32(`f${CROSS_SEPARATOR}toys`) % (2 ** 31 - 1),
      ]);
      expect(values(cross(context('device'), user('gender'), item('category')), f)).toEqual([
        fnv1a32(['ios', 'f', 'toys'].join(CROSS_SEPARATOR)) % (2 ** 31 - 1),
      ]);
    });

    it('depends on the order of the features', () => {
      const ab = values(cross(user('gender'), item('category')), f);
      const ba = values(cross(item('category'), user('gender')), f);
      expect(ab).not.toEqual(ba);
    });

    it('keeps values apart: ("ab", "c") and ("a", "bc") differ', () => {
      const left = frame({
        user: { gender: 'ab' },
        items: [{ id: 'i', stored: { category: 'c' } }],
      });
      const right = frame({
        user: { gender: 'a' },
        items: [{ id: 'i', stored: { category: 'bc' } }],
      });
      const column = cross(user('gender'), item('category'));
      expect(values(column, left)).not.toEqual(values(column, right));
    });

    it('uses defaults for missing features', () => {
      const column = cross(user('gender'), item('category'));
      expect(values(column, frame({ items: [{ id: 'i' }] }))).toEqual([
        fnv1a32(`x${CROSS_SEPARATOR}unknown`) % (2 ** 31 - 1),
      ]);
    });

    it('stays within [0, buckets)', () => {
      const column: ColumnSpec = {
        op: 'cross',
        features: [user('id'), item('id')],
        buckets: 13,
      };
      const items = Array.from({ length: 200 }, (_, i) => ({ id: `i${i}` }));
      for (const v of values(column, frame({ items }))) {
        expect(v).toBeGreaterThanOrEqual(0);
        expect(v).toBeLessThan(13);
      }
    });
  });

  describe('bucketize', () => {
    const column: ColumnSpec = { op: 'bucketize', feature: item('price'), boundaries: [1, 5, 10] };
    const prices = (...ps: number[]) =>
      values(column, frame({ items: ps.map((price, i) => ({ id: `i${i}`, stored: { price } })) }));

    it('counts the boundaries at or below the value', () => {
      expect(prices(-3, 0.5, 2, 7, 50)).toEqual([0, 0, 1, 2, 3]);
    });

    it('puts a value equal to a boundary in the bucket above it', () => {
      expect(prices(1, 5, 10)).toEqual([1, 2, 3]);
    });

    it('handles values just either side of a boundary', () => {
      expect(prices(4.999, 5, 5.001)).toEqual([1, 2, 2]);
    });

    it('uses the declared default when the feature is missing', () => {
      expect(forItem(column, {})).toBe(2); // default price 7
    });

    it('works with a single boundary', () => {
      const one: ColumnSpec = { op: 'bucketize', feature: user('age'), boundaries: [18] };
      expect(values(one, frame({ user: { age: 17 } }))).toEqual([0]);
      expect(values(one, frame({ user: { age: 18 } }))).toEqual([1]);
    });
  });

  describe('identity', () => {
    it('passes the number through', () => {
      const column: ColumnSpec = { op: 'identity', feature: item('price') };
      expect(forItem(column, { price: 12.5 })).toBe(12.5);
      expect(forItem(column, { price: -3 })).toBe(-3);
    });

    it('clips to [min, max]', () => {
      const column: ColumnSpec = { op: 'identity', feature: item('price'), clip: [0, 10] };
      expect(forItem(column, { price: -3 })).toBe(0);
      expect(forItem(column, { price: 4 })).toBe(4);
      expect(forItem(column, { price: 10 })).toBe(10);
      expect(forItem(column, { price: 11 })).toBe(10);
    });
  });

  describe('log1p', () => {
    const column: ColumnSpec = { op: 'log1p', feature: item('price') };

    it('is log(1 + x)', () => {
      expect(forItem(column, { price: 0 })).toBe(0);
      expect(forItem(column, { price: Math.E - 1 })).toBeCloseTo(1, 12);
      expect(forItem(column, { price: 99 })).toBeCloseTo(Math.log(100), 12);
    });

    it('treats negative values as 0', () => {
      expect(forItem(column, { price: -5 })).toBe(0);
    });

    it('clips the value before taking the log', () => {
      const clipped: ColumnSpec = { op: 'log1p', feature: item('price'), clip: [0, 9] };
      expect(forItem(clipped, { price: 1000 })).toBeCloseTo(Math.log(10), 12);
    });
  });

  describe('standardize', () => {
    it('is (x - mean) / std', () => {
      const column: ColumnSpec = { op: 'standardize', feature: user('age'), mean: 35, std: 10 };
      expect(values(column, frame({ user: { age: 50 } }))).toEqual([1.5]);
      expect(values(column, frame({ user: { age: 35 } }))).toEqual([0]);
      expect(values(column, frame({ user: { age: 15 } }))).toEqual([-2]);
    });

    it('clips the standardized value, not the raw one', () => {
      const column: ColumnSpec = {
        op: 'standardize',
        feature: user('age'),
        mean: 35,
        std: 10,
        clip: [-1, 1],
      };
      expect(values(column, frame({ user: { age: 100 } }))).toEqual([1]);
      expect(values(column, frame({ user: { age: 0 } }))).toEqual([-1]);
      expect(values(column, frame({ user: { age: 40 } }))).toEqual([0.5]);
    });

    it('standardizes the declared default when the feature is missing', () => {
      const column: ColumnSpec = { op: 'standardize', feature: user('age'), mean: 35, std: 10 };
      expect(values(column, frame())).toEqual([-0.5]); // default age 30
    });
  });

  describe('match', () => {
    const column: ColumnSpec = { op: 'match', features: [user('fav'), item('category')] };

    it('is 1 when both values are equal and 0 otherwise, per item', () => {
      const f = frame({
        user: { fav: 'toys' },
        items: [
          { id: 'a', stored: { category: 'toys' } },
          { id: 'b', stored: { category: 'books' } },
          { id: 'c', stored: { category: 'Toys' } },
        ],
      });
      expect(values(column, f)).toEqual([1, 0, 0]);
    });

    it('compares defaults when features are missing', () => {
      const same: ColumnSpec = { op: 'match', features: [user('fav'), user('fav')] };
      expect(values(same, frame())).toEqual([1]);
      expect(values(column, frame())).toEqual([0]); // 'none' vs 'unknown'
    });
  });

  describe('feature lookup', () => {
    const price: ColumnSpec = { op: 'identity', feature: item('price') };

    it('prefers features sent with the candidate over stored ones', () => {
      const f = frame({
        items: [
          { id: 'a', request: { price: 5 }, stored: { price: 50 } },
          { id: 'b', stored: { price: 50 } },
          { id: 'c', request: { category: 'toys' }, stored: { price: 60 } },
          { id: 'd', request: { price: 8 } },
          { id: 'e' },
        ],
      });
      expect(values(price, f)).toEqual([5, 50, 60, 8, 7]);
    });

    it('uses the declared default for a value of the wrong type', () => {
      expect(forItem(price, { price: 'cheap' })).toBe(7);
      expect(forItem(price, { price: '' })).toBe(7);
      expect(forItem(price, { price: '   ' })).toBe(7);
      const age: ColumnSpec = { op: 'standardize', feature: user('age'), mean: 0, std: 1 };
      expect(values(age, frame({ user: { age: 'old' } }))).toEqual([30]);
    });

    it('reads a numeric string as its number', () => {
      expect(forItem(price, { price: '12.5' })).toBe(12.5);
    });

    it('reads a boolean as 1 or 0 in numeric columns', () => {
      expect(forItem(price, { price: true })).toBe(1);
      expect(forItem(price, { price: false })).toBe(0);
    });

    it('reads user and context features from their rows', () => {
      const hour: ColumnSpec = { op: 'identity', feature: context('hour') };
      const f = frame({ user: { age: 44 }, context: { hour: 21 } });
      expect(values(hour, f)).toEqual([21]);
      expect(values({ op: 'identity', feature: user('age') }, f)).toEqual([44]);
      expect(values(hour, frame())).toEqual([12]);
    });
  });

  describe('perItem', () => {
    it.each<[string, ColumnSpec, boolean]>([
      ['a user feature', { op: 'identity', feature: user('age') }, false],
      ['user.id', { op: 'hash', feature: user('id'), buckets: 10 }, false],
      ['a context feature', { op: 'hash', feature: context('device'), buckets: 10 }, false],
      [
        'a user x context cross',
        { op: 'cross', features: [user('gender'), context('device')], buckets: 10 },
        false,
      ],
      ['a user/user match', { op: 'match', features: [user('fav'), user('gender')] }, false],
      ['an item feature', { op: 'log1p', feature: item('price') }, true],
      ['item.id', { op: 'hash', feature: item('id'), buckets: 10 }, true],
      [
        'a user x item cross',
        { op: 'cross', features: [user('gender'), item('category')], buckets: 10 },
        true,
      ],
      ['a user/item match', { op: 'match', features: [user('fav'), item('category')] }, true],
    ])('is %s -> %p', (_what, column, perItem) => {
      expect(compileColumn(column, features).perItem).toBe(perItem);
    });
  });
});
