import fc from 'fast-check';
import { bestIndices, rankedItems } from './ranked-items';

describe('rankedItems', () => {
  const ids = ['a', 'b', 'c', 'd', 'e', 'f'];

  it('sorts finite scores best first, ties in request order', () => {
    const scores = Float32Array.from([0.5, 0.9, 0.5, 0.1, 0.9, 0.2]);
    expect(rankedItems(ids, scores, 6).map((i) => i.id)).toEqual(['b', 'e', 'a', 'c', 'f', 'd']);
  });

  it('ranks NaN and infinite scores after every finite one, in request order, marked', () => {
    const scores = Float32Array.from([NaN, -5, Infinity, 0.3, -Infinity, NaN]);
    expect(rankedItems(ids, scores, 6)).toEqual([
      { id: 'd', score: Math.fround(0.3) },
      { id: 'b', score: -5 },
      { id: 'a', score: null, nonFinite: true },
      { id: 'c', score: null, nonFinite: true },
      { id: 'e', score: null, nonFinite: true },
      { id: 'f', score: null, nonFinite: true },
    ]);
  });

  it('keeps non-finite scores out of the top k while finite ones remain', () => {
    const scores = Float32Array.from([Infinity, 1, NaN, 2, 3, -1]);
    expect(rankedItems(ids, scores, 3).map((i) => i.id)).toEqual(['e', 'd', 'b']);
  });

  it('ties +0 and -0, in request order', () => {
    const scores = Float32Array.from([-0, 0, -0, -1e-45, 1e-45]);
    expect(rankedItems(ids, scores, 5).map((i) => i.id)).toEqual(['e', 'a', 'b', 'c', 'd']);
  });

  it('refuses more candidates than a packed key holds, rather than rank them wrongly', () => {
    expect(() => bestIndices(new Float32Array(2 ** 21 + 1), 10)).toThrow(RangeError);
  });

  it('selects the same top k as sorting everything, for any scores and k (property)', () => {
    const score = fc.oneof(
      fc.constantFrom(NaN, Infinity, -Infinity, 0, -0, 0.5, 1, -1),
      fc.float({ noNaN: false }),
    );
    fc.assert(
      fc.property(fc.array(score, { maxLength: 400, size: 'max' }), fc.nat(120), (values, k) => {
        const scores = Float32Array.from(values);
        const keys = Float64Array.from(scores, (v) => (Number.isFinite(v) ? v : -Infinity));
        const sorted = Array.from({ length: keys.length }, (_, i) => i).sort(
          (a, b) => keys[b] - keys[a] || a - b,
        );
        expect(Array.from(bestIndices(scores, k))).toEqual(sorted.slice(0, k));
      }),
      { numRuns: 2_000 },
    );
  });
});
