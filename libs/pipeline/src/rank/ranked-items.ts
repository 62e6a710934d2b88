import { RankedItem } from '../request/rank-request';

/**
 * The best `k` candidates, best first. Ties keep request order. A score that is NaN or infinite
 * ranks after every finite one (in request order among themselves), with `score: null` and
 * `nonFinite: true`: an infinite score must not win, and a NaN must not be silently null.
 */
export function rankedItems(ids: readonly string[], scores: Float32Array, k: number): RankedItem[] {
  const order = bestIndices(scores, k);
  const items = new Array<RankedItem>(order.length);
  for (let r = 0; r < order.length; r++) {
    const i = order[r];
    const score = scores[i];
    items[r] = Number.isFinite(score)
      ? { id: ids[i], score }
      : { id: ids[i], score: null, nonFinite: true };
  }
  return items;
}

/** A few hundred out of thousands: select with a heap; a larger share: sort everything. */
const HEAP_SELECT_SHARE = 1 / 4;

/**
 * Index bits of a packed key (see packKeys): up to 2^21 candidates, far above what a request may
 * carry (RANK_MAX_CANDIDATES is at most 100,000, checked at boot).
 */
const INDEX_BITS = 21;
const INDEX_SPAN = 2 ** INDEX_BITS;
const SIGN = 0x80000000;

/**
 * The indices of the `k` best scores, best first; ties, and the non-finite scores (after every
 * finite one), in index order.
 *
 * Each score and its index are packed into one float64 (see packKeys), so that a larger key is a
 * better candidate and no two keys are equal: the heap and the sorts compare plain numbers, and
 * the final order comes from the typed array's own sort, with no comparator called per pair (a
 * comparator sort of 100 candidates cost ~35 µs here, and a boxed number per comparison).
 */
export function bestIndices(scores: Float32Array, k: number): Int32Array {
  const n = scores.length;
  k = Math.max(0, Math.min(k, n));
  if (n > INDEX_SPAN)
    throw new RangeError(`${n} candidates; a ranking holds at most ${INDEX_SPAN}`);
  const keys = packKeys(scores);
  if (k >= n * HEAP_SELECT_SHARE) return indicesOfBest(keys.sort(), k);
  if (k === 0) return new Int32Array(0);
  // A min-heap of the k best keys so far: its root is the worst of them.
  const heap = new Float64Array(k);
  for (let i = 0; i < k; i++) {
    let at = i;
    const key = keys[i];
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (heap[parent] <= key) break;
      heap[at] = heap[parent];
      at = parent;
    }
    heap[at] = key;
  }
  for (let i = k; i < n; i++) {
    const key = keys[i];
    if (key <= heap[0]) continue;
    let at = 0;
    for (;;) {
      const left = 2 * at + 1;
      if (left >= k) break;
      const right = left + 1;
      const child = right < k && heap[right] < heap[left] ? right : left;
      if (heap[child] >= key) break;
      heap[at] = heap[child];
      at = child;
    }
    heap[at] = key;
  }
  return indicesOfBest(heap.sort(), k);
}

/**
 * One float64 per score, `rank * 2^21 + (2^21 - 1 - index)`: `rank` orders the float32 scores
 * as numbers (their bits, the sign flipped for positives and all bits for negatives; both zeros
 * alike), 0 for a non-finite score (below every finite one, whose rank is above 2^23). Both
 * parts are exact in a float64 (32 + 21 bits). A larger key: a better score, or the same score
 * at a smaller index.
 */
function packKeys(scores: Float32Array): Float64Array {
  const n = scores.length;
  const bits = new Uint32Array(scores.buffer, scores.byteOffset, n);
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const score = scores[i];
    let rank = 0;
    if (score === 0) rank = SIGN;
    else if (Number.isFinite(score)) {
      const b = bits[i];
      rank = (b & SIGN) === 0 ? (b | SIGN) >>> 0 : ~b >>> 0;
    }
    keys[i] = rank * INDEX_SPAN + (INDEX_SPAN - 1 - i);
  }
  return keys;
}

/** The indices of the `k` largest keys of `sorted` (ascending), largest first. */
function indicesOfBest(sorted: Float64Array, k: number): Int32Array {
  const out = new Int32Array(k);
  for (let r = 0, from = sorted.length - 1; r < k; r++, from--)
    out[r] = INDEX_SPAN - 1 - (sorted[from] % INDEX_SPAN);
  return out;
}
