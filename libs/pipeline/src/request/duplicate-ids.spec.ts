import fc from 'fast-check';
import { DuplicateIds } from './duplicate-ids';

/** What a Map gives: per id, -1 the first time, else the index it was first seen at. */
function reference(ids: readonly string[]): number[] {
  const seen = new Map<string, number>();
  return ids.map((id, i) => {
    const first = seen.get(id);
    if (first !== undefined) return first;
    seen.set(id, i);
    return -1;
  });
}

function run(table: DuplicateIds, ids: readonly string[]): number[] {
  table.start(ids.length);
  return ids.map((id, i) => table.firstIndex(id, i, (j) => ids[j]));
}

describe('DuplicateIds', () => {
  it('names the first index of each repeated id', () => {
    expect(run(new DuplicateIds(), ['a', 'b', 'a', 'c', 'b', 'a'])).toEqual([-1, -1, 0, -1, 1, 0]);
  });

  it('forgets the previous request: the same ids again are new', () => {
    const table = new DuplicateIds();
    expect(run(table, ['x', 'y'])).toEqual([-1, -1]);
    expect(run(table, ['y', 'x', 'y'])).toEqual([-1, -1, 0]);
  });

  it('agrees with a Map over many requests of any size on one table, probing or falling back', () => {
    const id = fc.oneof(
      fc.constantFrom('a', 'b', 'i1', 'i2', 'i10', '', 'ü', '\u0000', 'constructor', '__proto__'),
      fc.string({ maxLength: 12, unit: 'binary' }),
    );
    const requests = fc.array(fc.array(id, { maxLength: 300 }), { minLength: 1, maxLength: 6 });
    fc.assert(
      fc.property(fc.constantFrom(0, 1, 2, 32), requests, (maxProbes, batches) => {
        const table = new DuplicateIds(maxProbes);
        for (const ids of batches) expect(run(table, ids)).toEqual(reference(ids));
      }),
      { numRuns: 300 },
    );
  });

  it('stays right when every id lands in a crowded table (fallback mid-request)', () => {
    // maxProbes 0: the second id that meets a taken slot moves the request to a Map.
    const ids = Array.from({ length: 2000 }, (_, i) => `i${i % 1500}`);
    expect(run(new DuplicateIds(0), ids)).toEqual(reference(ids));
  });
});
