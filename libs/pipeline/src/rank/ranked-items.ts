import { RankedItem } from '../request/rank-request';

/**
 * The best `k` candidates, best first. Ties keep request order. A score that is NaN or infinite
 * ranks after every finite one (in request order among themselves), with `score: null` and
 * `nonFinite: true`: an infinite score must not win, and a NaN must not be silently null.
 */
export function rankedItems(ids: readonly string[], scores: Float32Array, k: number): RankedItem[] {
  const n = ids.length;
  const keys = new Float64Array(n);
  const order = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    order[i] = i;
    keys[i] = Number.isFinite(scores[i]) ? scores[i] : -Infinity;
  }
  // -Infinity - -Infinity is NaN, which is falsy: non-finite scores fall back to request order.
  order.sort((a, b) => keys[b] - keys[a] || a - b);
  const items = new Array<RankedItem>(k);
  for (let r = 0; r < k; r++) {
    const i = order[r];
    items[r] = Number.isFinite(scores[i])
      ? { id: ids[i], score: scores[i] }
      : { id: ids[i], score: null, nonFinite: true };
  }
  return items;
}

/** Candidates whose fused score is NaN or infinite. */
export function countNonFinite(scores: Float32Array): number {
  let count = 0;
  for (let i = 0; i < scores.length; i++) if (!Number.isFinite(scores[i])) count++;
  return count;
}
