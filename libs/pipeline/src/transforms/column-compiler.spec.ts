import { FeatureRow } from '@app/features';
import { BundleSpec, ColumnSpec, FeatureDecl, FeatureRef } from '../bundle/bundle-definition';
import { compileColumn } from './column-compiler';
import { FeatureFrame } from './feature-frame';
import { CROSS_SEPARATOR, fnv1a32 } from './feature-hash';
import { FeatureValues } from './feature-values';

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
    userId?: string;
    user?: FeatureRow;
    userStored?: FeatureRow;
    context?: FeatureRow;
    items?: { id: string; request?: FeatureRow; stored?: FeatureRow }[];
    onBadValue?: FeatureFrame['onBadValue'];
  } = {},
): FeatureFrame {
  const items = parts.items ?? [{ id: 'i1' }];
  return {
    userId: parts.userId ?? 'u1',
    userRequest: parts.user,
    userStored: parts.userStored,
    context: parts.context,
    itemIds: items.map((i) => i.id),
    itemRequest: items.map((i) => i.request),
    itemStored: items.map((i) => i.stored),
    onBadValue: parts.onBadValue,
  };
}

/** The bundle's readers when `columns` are all its columns (the overflow check covers them). */
const valuesFor = (...columns: ColumnSpec[]) =>
  new FeatureValues(features, [{ name: 'x', dtype: 'float32', columns }]);

/** The column's value for every row of the frame. */
function values(column: ColumnSpec, f: FeatureFrame): number[] {
  const compiled = compileColumn(column, valuesFor(column));
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
      const f = frame({ userId: 'user-9' });
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
      expect(compileColumn(column, valuesFor(column)).perItem).toBe(perItem);
    });
  });
});

describe('compileColumn: values resolve through their declared type', () => {
  type Source = FeatureRef['source'];
  type Place = 'user request' | 'user stored' | 'item request' | 'item stored' | 'context';
  const PLACES: Place[] = ['user request', 'user stored', 'item request', 'item stored', 'context'];
  const B = 2 ** 31 - 1;

  // Every source declares a number `n` and a string `s`, and a `constructor` (a name that is
  // also a member of Object.prototype).
  const typed: BundleSpec['features'] = {
    user: {
      n: { type: 'number', default: 5 },
      s: { type: 'string', default: 'su' },
      constructor: { type: 'number', default: 4 } as FeatureDecl,
    },
    item: {
      n: { type: 'number', default: 7 },
      s: { type: 'string', default: 'si' },
      constructor: { type: 'string', default: 'ctor' } as FeatureDecl,
    },
    context: { n: { type: 'number', default: 9 }, s: { type: 'string', default: 'sc' } },
  };
  const ref = (source: Source, name: string): FeatureRef => ({ source, name });
  const sourceOf = (place: Place): Source => place.split(' ')[0] as Source;

  /** A one-item frame with `rows` placed where named; bad values reported go to `reports`. */
  function placed(rows: Partial<Record<Place, FeatureRow>>, reports: string[] = []): FeatureFrame {
    const f = frame({
      user: rows['user request'],
      userStored: rows['user stored'],
      context: rows.context,
      items: [{ id: 'i1', request: rows['item request'], stored: rows['item stored'] }],
    });
    return {
      ...f,
      onBadValue: (source, layer, row, feature) =>
        reports.push(`${source}:${layer}:${row}:${feature}`),
    };
  }

  /** The value of `column` at row 0 when compiled with the bundle columns `all`. */
  function at(column: ColumnSpec, f: FeatureFrame, all: ColumnSpec[] = [column]): number {
    const values = new FeatureValues(typed, [{ name: 'x', dtype: 'float32', columns: all }]);
    const compiled = compileColumn(column, values);
    compiled.prepare?.(f);
    return compiled.compute(f, 0);
  }

  /** Every op reading the number `n` of `source` (with its string `s` where an op needs two). */
  const numberOps = (source: Source): [string, ColumnSpec, number][] => {
    const [n, s] = [ref(source, 'n'), ref(source, 's')];
    // Expected values for n = 20 and s = '20'.
    return [
      ['hash', { op: 'hash', feature: n, buckets: B }, fnv1a32('20') % B],
      [
        'cross',
        { op: 'cross', features: [n, s], buckets: B },
        fnv1a32(`20${CROSS_SEPARATOR}20`) % B,
      ],
      ['match', { op: 'match', features: [n, s] }, 1],
      ['bucketize', { op: 'bucketize', feature: n, boundaries: [1, 10, 20.5, 30] }, 2],
      ['identity', { op: 'identity', feature: n }, 20],
      ['log1p', { op: 'log1p', feature: n }, Math.log1p(20)],
      ['standardize', { op: 'standardize', feature: n, mean: 3, std: 2 }, 8.5],
    ];
  };
  const cases = PLACES.flatMap((place) =>
    numberOps(sourceOf(place)).map(
      ([op, column, want]) => [op, place, column, want] as [string, Place, ColumnSpec, number],
    ),
  );

  describe.each(cases)('%s of a number feature from the %s', (_op, place, column, want) => {
    const source = sourceOf(place);
    const defaults = { user: 5, item: 7, context: 9 };
    const def = defaults[source];

    it.each<[string, FeatureRow['n']]>([
      ['the number 20', 20],
      ['"20"', '20'],
      ['"20.0"', '20.0'],
      ['" 20 "', ' 20 '],
      ['"2e1"', '2e1'],
    ])('reads %s as the number 20 (string form "20")', (_what, n) => {
      const reports: string[] = [];
      expect(at(column, placed({ [place]: { n, s: '20' } }, reports))).toBe(want);
      expect(reports).toEqual([]);
    });

    it('reads true as 1 and false as 0', () => {
      const one = (n: FeatureRow['n']) => at(column, placed({ [place]: { n, s: '1' } }));
      expect(one(true)).toBe(one(1));
      expect(one(false)).toBe(one('0'));
      expect(one(true)).toBe(one('1.0'));
    });

    it('takes the declared default for a value unusable as a number, and reports it', () => {
      const reports: string[] = [];
      const bad = at(column, placed({ [place]: { n: 'twenty', s: String(def) } }, reports));
      expect(bad).toBe(at(column, placed({ [place]: { n: def, s: String(def) } })));
      expect(reports).toEqual([`${source}:${place.endsWith('stored') ? 'stored' : 'request'}:0:n`]);
    });

    if (place === 'user request' || place === 'item request') {
      const stored: Place = place === 'user request' ? 'user stored' : 'item stored';

      it('falls back to the stored value when the request value is unusable, then the default', () => {
        const reports: string[] = [];
        const fallback = at(
          column,
          placed({ [place]: { n: '', s: '20' }, [stored]: { n: '20.0' } }, reports),
        );
        expect(fallback).toBe(want);
        expect(reports).toEqual([`${source}:request:0:n`]);

        const both: string[] = [];
        const neither = at(
          column,
          placed({ [place]: { n: 'x', s: String(def) }, [stored]: { n: 'y' } }, both),
        );
        expect(neither).toBe(at(column, placed({ [place]: { s: String(def) } })));
        expect(both).toEqual([`${source}:request:0:n`, `${source}:stored:0:n`]);
      });

      it('prefers a usable request value over the stored one', () => {
        const value = at(column, placed({ [place]: { n: 20, s: '20' }, [stored]: { n: 3 } }));
        expect(value).toBe(want);
      });
    }
  });

  describe.each(PLACES)('string ops of a string feature from the %s', (place) => {
    const source = sourceOf(place);
    const hash: ColumnSpec = { op: 'hash', feature: ref(source, 's'), buckets: B };
    const match: ColumnSpec = { op: 'match', features: [ref(source, 's'), ref(source, 'n')] };
    const cross: ColumnSpec = {
      op: 'cross',
      features: [ref(source, 'n'), ref(source, 's')],
      buckets: B,
    };

    it('hashes a number by its string form and a boolean as "true"/"false"', () => {
      const h = (s: FeatureRow['s']) => at(hash, placed({ [place]: { s } }));
      expect(h(20)).toBe(fnv1a32('20') % B);
      expect(h(20.5)).toBe(h('20.5'));
      expect(h(true)).toBe(fnv1a32('true') % B);
      expect(h(false)).toBe(fnv1a32('false') % B);
      expect(h('20.0')).not.toBe(h(20)); // a string keeps its own spelling
    });

    it('matches a number feature by the string form of its resolved number', () => {
      expect(at(match, placed({ [place]: { s: '20', n: '20.0' } }))).toBe(1);
      expect(at(match, placed({ [place]: { s: 1, n: true } }))).toBe(1);
      expect(at(match, placed({ [place]: { s: 'true', n: true } }))).toBe(0);
    });

    it('crosses a boolean number feature as "1" with a boolean string feature as "true"', () => {
      expect(at(cross, placed({ [place]: { n: true, s: true } }))).toBe(
        fnv1a32(`1${CROSS_SEPARATOR}true`) % B,
      );
    });

    it('takes the next layer for a value that is no scalar, and reports it', () => {
      const reports: string[] = [];
      const odd = { s: null } as unknown as FeatureRow;
      const defaults = { user: 'su', item: 'si', context: 'sc' };
      expect(at(hash, placed({ [place]: odd }, reports))).toBe(fnv1a32(defaults[source]) % B);
      expect(reports).toHaveLength(1);
    });
  });

  describe('a number that is not finite in a float32 column', () => {
    const hour = ref('context', 'n');
    const identity: ColumnSpec = { op: 'identity', feature: hour };
    const standardize: ColumnSpec = { op: 'standardize', feature: hour, mean: 0, std: 1e-10 };
    const hash: ColumnSpec = { op: 'hash', feature: hour, buckets: B };
    const ctx = (n: FeatureRow['n'], reports?: string[]) => placed({ context: { n } }, reports);

    it.each<[string, ColumnSpec, FeatureRow['n']]>([
      ['identity of 1e308', identity, 1e308],
      ['identity of -1e39 (finite as a double, not as float32)', identity, -1e39],
      ['identity of "1e39"', identity, '1e39'],
      ['standardize overflowing its std', standardize, 1e30],
      [
        'identity clipped beyond float32',
        { op: 'identity', feature: hour, clip: [-1e300, 1e300] },
        1e308,
      ],
    ])('%s takes the default and is reported', (_what, column, n) => {
      const reports: string[] = [];
      expect(at(column, ctx(n, reports))).toBe(at(column, ctx(9)));
      expect(reports).toEqual(['context:request:0:n']);
    });

    it('falls back to the stored value first', () => {
      const price = ref('item', 'n');
      const column: ColumnSpec = { op: 'identity', feature: price };
      const reports: string[] = [];
      const f = placed({ 'item request': { n: 1e308 }, 'item stored': { n: 3 } }, reports);
      expect(at(column, f)).toBe(3);
      expect(reports).toEqual(['item:request:0:n']);
    });

    it('is refused by every column of the feature, so all columns see the same value', () => {
      const all = [hash, identity];
      expect(at(hash, ctx(1e308), all)).toBe(at(hash, ctx(9), all));
      // A bundle without a float column on the feature can hash any finite number.
      expect(at(hash, ctx(1e308), [hash])).toBe(fnv1a32('1e+308') % B);
    });

    it('is kept where the column stays finite: clipped, log1p or bucketized', () => {
      const clipped: ColumnSpec = { op: 'identity', feature: hour, clip: [0, 1] };
      const log1p: ColumnSpec = { op: 'log1p', feature: hour };
      const bucketize: ColumnSpec = { op: 'bucketize', feature: hour, boundaries: [10] };
      expect(at(clipped, ctx(1e308))).toBe(1);
      expect(at(log1p, ctx(1e308))).toBeCloseTo(Math.log1p(1e308), 9);
      expect(at(bucketize, ctx(1e308))).toBe(1);
    });
  });

  describe('names that are also Object.prototype members', () => {
    const userCtor: ColumnSpec = { op: 'identity', feature: ref('user', 'constructor') };
    const itemCtor: ColumnSpec = { op: 'hash', feature: ref('item', 'constructor'), buckets: B };

    it('reads a declared `constructor` feature from the rows, never from Object.prototype', () => {
      expect(at(userCtor, placed({ 'user request': {} }))).toBe(4);
      expect(at(userCtor, placed({ 'user stored': { constructor: 6 } }))).toBe(6);
      expect(at(itemCtor, placed({ 'item request': {}, 'item stored': {} }))).toBe(
        fnv1a32('ctor') % B,
      );
      expect(at(itemCtor, placed({ 'item request': JSON.parse('{"constructor":"c2"}') }))).toBe(
        fnv1a32('c2') % B,
      );
    });

    it('reads a row whose own keys are `toString` or `__proto__` as plain data', () => {
      const rows = JSON.parse('{"__proto__": 1, "toString": 2, "s": "own"}') as FeatureRow;
      const hash: ColumnSpec = { op: 'hash', feature: ref('context', 's'), buckets: B };
      expect(at(hash, placed({ context: rows }))).toBe(fnv1a32('own') % B);
    });

    it.each(['toString', 'constructor', '__proto__', 'hasOwnProperty'])(
      'refuses to compile a reference to an undeclared %s',
      (name) => {
        const column: ColumnSpec = { op: 'hash', feature: ref('context', name), buckets: B };
        expect(() => at(column, placed({}))).toThrow(`context.${name} is not declared`);
      },
    );
  });
});
