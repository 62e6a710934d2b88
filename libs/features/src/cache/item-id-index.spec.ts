import fc from 'fast-check';
import { FeatureRow } from '../feature-row';
import { IndexedRow, ItemIdIndex } from './item-id-index';
import { MAX_INDEXED_ID_LENGTH } from './item-id-record';

/** A held row as RowLru makes them, its memo fields plain (the index reads them). */
function held(id: string, row: FeatureRow | undefined = { id }, expiresAt = Infinity): IndexedRow {
  return {
    id,
    row,
    expiresAt,
    tick: 0,
    memoRow: undefined,
    memoKey: 0,
    memoValue: 0,
    rec: -1,
    entry: -1,
  };
}

describe('ItemIdIndex', () => {
  it('finds what it holds, with its row, holder and expiry; nothing else', () => {
    const index = new ItemIdIndex(1);
    const a = held('a', { price: 1 }, 1234.5);
    const b = held('item-000042');
    index.add(a);
    index.add(b);
    const rec = index.find('a');
    expect(rec).toBeGreaterThanOrEqual(0);
    expect(index.holderAt(rec)).toBe(a);
    expect(index.rowAt(rec)).toBe(a.row);
    expect(index.expiresAt(rec)).toBe(1234.5);
    expect(index.holderAt(index.find('item-000042'))).toBe(b);
    // Same hash run, other ids: a prefix, a longer id, another character.
    for (const other of ['', 'b', 'aa', 'A', 'item-00004', 'item-0000421', 'item-000043'])
      expect(index.find(other)).toBe(-1);
    expect(index.size).toBe(2);
  });

  it('leaves out ids it cannot hold inline: too long, or with a character above 255', () => {
    const index = new ItemIdIndex(1);
    const long = held('x'.repeat(MAX_INDEXED_ID_LENGTH + 1));
    const wide = held('caf\u0113');
    const edge = held('\u00ff'.repeat(MAX_INDEXED_ID_LENGTH));
    for (const h of [long, wide, edge]) index.add(h);
    expect([long.rec, wide.rec]).toEqual([-1, -1]);
    expect(index.find(long.id)).toBe(-1);
    expect(index.find(wide.id)).toBe(-1);
    expect(index.holderAt(index.find(edge.id))).toBe(edge);
    expect(index.size).toBe(1);
  });

  it('mirrors the memo only while it is for the row held, and the tick', () => {
    const index = new ItemIdIndex(1);
    const h = held('a');
    index.add(h);
    const rec = index.find('a');
    Object.assign(h, { memoRow: h.row, memoKey: 7, memoValue: 40, tick: 9 });
    index.noteMemo(h);
    index.noteTick(h);
    expect([index.memoKeyAt(rec), index.memoValueAt(rec), index.tickAt(rec)]).toEqual([7, 40, 9]);
    h.memoRow = { other: 1 };
    index.noteMemo(h);
    expect([index.memoKeyAt(rec), index.memoValueAt(rec)]).toEqual([0, 0]);
  });

  it('forgets a removed row, and a row dropped by clear stops mirroring into the new table', () => {
    const index = new ItemIdIndex(1);
    const a = held('a');
    const b = held('b');
    index.add(a);
    index.add(b);
    index.remove(a);
    expect(index.find('a')).toBe(-1);
    expect(a.rec).toBe(-1);
    expect(index.holderAt(index.find('b'))).toBe(b);
    index.clear();
    expect(index.find('b')).toBe(-1);
    expect(b.rec).toBe(-1);
    const c = held('c');
    index.add(c);
    // A late memo write on a dropped row must not land in the record now at its old place.
    Object.assign(b, { memoRow: b.row, memoKey: 5, memoValue: 5 });
    index.noteMemo(b);
    expect(index.memoKeyAt(index.find('c'))).toBe(0);
  });

  it('finds a batch of ids with findAll, reusing its answer array', () => {
    const index = new ItemIdIndex(5);
    const [a, b] = [held('a'), held('b')];
    index.add(a);
    index.add(b);
    const first = index.findAll(['b', 'zz', 'a', 'b']);
    expect(Array.from(first.subarray(0, 4))).toEqual([
      index.find('b'),
      -1,
      index.find('a'),
      index.find('b'),
    ]);
    expect(index.holderAt(first[0])).toBe(b);
    // A batch longer than the array grows it; a shorter one reuses it.
    const ids = Array.from({ length: 5000 }, (_, i) => (i % 2 === 0 ? 'a' : `no${i}`));
    const many = index.findAll(ids);
    expect(many.length).toBeGreaterThanOrEqual(5000);
    expect(many[0]).toBe(index.find('a'));
    expect(many[1]).toBe(-1);
    expect(index.findAll(['a'])).toBe(many);
    expect(index.findAll([]).length).toBeGreaterThanOrEqual(0);
  });

  it('grows past its first table and keeps every row findable', () => {
    const index = new ItemIdIndex(3);
    const rows = Array.from({ length: 10_000 }, (_, i) => held(`i${i}`));
    rows.forEach((h) => index.add(h));
    rows.filter((_, i) => i % 3 === 0).forEach((h) => index.remove(h));
    expect(index.size).toBe(10_000 - 3334);
    rows.forEach((h, i) => {
      const rec = index.find(h.id);
      if (i % 3 === 0) expect(rec).toBe(-1);
      else expect(index.holderAt(rec)).toBe(h);
    });
  });

  it('agrees with a Map through any sequence of adds, removes and clears (fuzz)', () => {
    // Few distinct ids: the same ids come and go, runs pass removed records, the table rebuilds.
    const id = fc.oneof(
      fc.integer({ min: 0, max: 300 }).map((n) => `r${n}`),
      fc.string({ maxLength: 40 }),
    );
    const op = fc.oneof(
      { weight: 6, arbitrary: fc.record({ kind: fc.constant('add' as const), id }) },
      { weight: 3, arbitrary: fc.record({ kind: fc.constant('remove' as const), id }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('clear' as const), id }) },
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 0x7ffffffe }),
        fc.array(op, { maxLength: 3000, size: 'max' }),
        (seed, ops) => {
          const index = new ItemIdIndex(seed);
          const model = new Map<string, IndexedRow>();
          for (const { kind, id: key } of ops) {
            if (kind === 'clear') {
              index.clear();
              model.clear();
            } else if (kind === 'remove' || model.has(key)) {
              // The owner removes a row before it adds another for the same id.
              const old = model.get(key);
              if (old !== undefined) index.remove(old);
              model.delete(key);
            }
            if (kind === 'add') {
              const h = held(key);
              index.add(h);
              model.set(key, h);
            }
          }
          for (const [key, h] of model) {
            const rec = index.find(key);
            // A row the index could not take goes the Map's way: never a wrong one.
            if (h.rec < 0) expect(rec).toBe(-1);
            else expect(index.holderAt(rec)).toBe(h);
          }
          for (let n = 0; n <= 300; n++)
            if (!model.has(`r${n}`)) expect(index.find(`r${n}`)).toBe(-1);
          // findAll answers what find answers, id by id: held or not, repeated, not indexable.
          const asked = [...model.keys(), ...ops.map((o) => o.id), 'x'.repeat(33), 'wide\u0100'];
          const found = index.findAll(asked);
          expect(found.length).toBeGreaterThanOrEqual(asked.length);
          expect(Array.from(found.subarray(0, asked.length))).toEqual(
            asked.map((k) => index.find(k)),
          );
        },
      ),
      { numRuns: 60 },
    );
  });
});
