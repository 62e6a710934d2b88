import { countNonFinite } from './count-non-finite';

describe('countNonFinite', () => {
  it('counts the NaN and infinite values', () => {
    expect(countNonFinite(Float32Array.from([NaN, 1, Infinity, -Infinity, 0]))).toBe(3);
    expect(countNonFinite(new Float32Array(0))).toBe(0);
  });
});
