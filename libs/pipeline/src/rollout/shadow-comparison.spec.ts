import fc from 'fast-check';
import { compareShadow } from './shadow-comparison';

describe('compareShadow', () => {
  it('finds no difference between identical scores', () => {
    const scores = new Float32Array([0.3, 0.9, 0.1, 0.5]);
    expect(compareShadow(scores, scores.slice(), 3)).toEqual({
      candidates: 4,
      k: 3,
      overlapAtK: 1,
      rankCorrelation: 1,
      meanAbsDelta: 0,
      maxAbsDelta: 0,
      nonFinite: 0,
    });
  });

  it('gives the textbook answer for two swapped pairs (rho = 1 - 6*4/(5*24) = 0.8)', () => {
    const result = compareShadow([0.9, 0.8, 0.7, 0.6, 0.5], [0.8, 0.9, 0.7, 0.5, 0.6], 5);
    expect(result.rankCorrelation).toBeCloseTo(0.8, 12);
    expect(result.overlapAtK).toBe(1);
    expect(result.meanAbsDelta).toBeCloseTo(0.08, 12);
    expect(result.maxAbsDelta).toBeCloseTo(0.1, 12);
  });

  it('sees a reversed ranking: no overlap at the top, correlation -1', () => {
    const result = compareShadow([5, 4, 3, 2, 1], [1, 2, 3, 4, 5], 2);
    expect(result).toMatchObject({ k: 2, overlapAtK: 0, rankCorrelation: -1 });
    expect(result).toMatchObject({ meanAbsDelta: 12 / 5, maxAbsDelta: 4 });
  });

  it('correlates the primary top-k only, and counts partial overlap', () => {
    // Primary top 4: 0,1,2,3. Shadow top 4: 0,1,2,5 (it drops 3 for 5). Over items 0..3 the
    // shadow scores 10,9,8,0: the same order, so rho is 1 while overlap@4 is 3/4.
    const primary = [10, 9, 8, 7, 1, 2];
    const shadow = [10, 9, 8, 0, 1, 7.5];
    expect(compareShadow(primary, shadow, 4)).toMatchObject({
      overlapAtK: 0.75,
      rankCorrelation: 1,
    });
  });

  it('gives tied items their average rank', () => {
    // x ranks 1,2,3,4; y = [1,1,0,0] ranks 1.5,1.5,3.5,3.5: rho = 4 / sqrt(5 * 4) = 0.894...
    const result = compareShadow([4, 3, 2, 1], [1, 1, 0, 0], 4);
    expect(result.rankCorrelation).toBeCloseTo(4 / Math.sqrt(20), 12);
  });

  it('leaves the correlation undefined when it is (one item, or a constant shadow)', () => {
    expect(compareShadow([1, 2], [2, 1], 1).rankCorrelation).toBeUndefined();
    const constant = compareShadow([3, 2, 1], [0.5, 0.5, 0.5], 3);
    expect(constant.rankCorrelation).toBeUndefined();
    expect(constant.overlapAtK).toBe(1); // ties keep candidate order, like the rank path
  });

  it('ranks non-finite scores last and keeps them out of the deltas', () => {
    const result = compareShadow([0.9, 0.5, 0.1], [NaN, 0.4, 0.3], 1);
    expect(result).toMatchObject({ nonFinite: 1, overlapAtK: 0 });
    expect(result.meanAbsDelta).toBeCloseTo(0.15, 12);
    expect(result.maxAbsDelta).toBeCloseTo(0.2, 12);
    const all = compareShadow([Infinity], [1], 1);
    expect(all).toEqual({ candidates: 1, k: 1, overlapAtK: 1, nonFinite: 1 });
  });

  it('caps k at the candidate count and refuses vectors of different lengths', () => {
    expect(compareShadow([1, 2], [1, 2], 100).k).toBe(2);
    expect(() => compareShadow([1, 2], [1], 1)).toThrow(RangeError);
  });

  it('stays within its ranges for any scores', () => {
    const score = fc.oneof(fc.double(), fc.constantFrom(0, 1, NaN, Infinity));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(score, score), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 0, max: 80 }),
        (pairs, k) => {
          const r = compareShadow(
            pairs.map((p) => p[0]),
            pairs.map((p) => p[1]),
            k,
          );
          expect(r.overlapAtK).toBeGreaterThanOrEqual(0);
          expect(r.overlapAtK).toBeLessThanOrEqual(1);
          if (r.rankCorrelation !== undefined) {
            expect(Math.abs(r.rankCorrelation)).toBeLessThanOrEqual(1);
          }
          if (r.meanAbsDelta !== undefined)
            expect(r.meanAbsDelta).toBeLessThanOrEqual(r.maxAbsDelta!);
        },
      ),
    );
  });
});
