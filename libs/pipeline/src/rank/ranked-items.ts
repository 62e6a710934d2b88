import { RankedItem } from '../request/rank-request';

/**
 * The best `k` candidates, best first. Ties keep request order. A score that is NaN or infinite
 * ranks after every finite one (in request order among themselves), with `score: null` and
 * `nonFinite: true`: an infinite score must not win, and a NaN must not be silently null.
 */
export function rankedItems(ids: readonly string[], scores: Float32Array, k: number): RankedItem[] {
  const n = ids.length;
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) keys[i] = Number.isFinite(scores[i]) ? scores[i] : -Infinity;
  const order = bestIndices(keys, k);
  const items = new Array<RankedItem>(order.length);
  for (let r = 0; r < order.length; r++) {
    const i = order[r];
    items[r] = Number.isFinite(scores[i])
      ? { id: ids[i], score: scores[i] }
      : { id: ids[i], score: null, nonFinite: true };
  }
  return items;
}

/** A few hundred out of thousands: select with a heap; a larger share: sort everything. */
const HEAP_SELECT_SHARE = 1 / 4;

/**
 * The indices of the `k` best keys, best first; ties by index. Selecting k of n with a bounded
 * heap costs O(n log k) comparisons, mostly one each, instead of sorting all n.
 */
export function bestIndices(keys: Float64Array, k: number): number[] {
  const n = keys.length;
  k = Math.max(0, Math.min(k, n));
  // -Infinity - -Infinity is NaN, which is falsy: equal keys fall back to index order.
  const better = (a: number, b: number) => keys[b] - keys[a] || a - b;
  if (k >= n * HEAP_SELECT_SHARE) {
    const order = Array.from({ length: n }, (_, i) => i);
    return order.sort(better).slice(0, k);
  }
  if (k === 0) return [];
  // A min-heap of the k best so far: its root is the worst of them.
  const heap = new Int32Array(k);
  const worse = (a: number, b: number) => keys[a] < keys[b] || (keys[a] === keys[b] && a > b);
  for (let i = 0; i < k; i++) {
    let at = i;
    heap[at] = i;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!worse(heap[at], heap[parent])) break;
      [heap[at], heap[parent]] = [heap[parent], heap[at]];
      at = parent;
    }
  }
  for (let i = k; i < n; i++) {
    if (!worse(heap[0], i)) continue;
    heap[0] = i;
    for (let at = 0; ;) {
      const left = 2 * at + 1;
      if (left >= k) break;
      const right = left + 1;
      const child = right < k && worse(heap[right], heap[left]) ? right : left;
      if (!worse(heap[child], heap[at])) break;
      [heap[at], heap[child]] = [heap[child], heap[at]];
      at = child;
    }
  }
  return Array.from(heap).sort(better);
}
