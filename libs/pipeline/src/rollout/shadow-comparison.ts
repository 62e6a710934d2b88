/** How far the shadow's scores of a request are from the primary's, over the same candidates. */
export interface ShadowComparison {
  candidates: number;
  /** Items compared at the top: the asked k, at most the candidate count. */
  k: number;
  /** Share (0-1) of the primary's top k that is also in the shadow's top k. */
  overlapAtK: number;
  /**
   * Spearman's rank correlation (-1 to 1, ties given their average rank) of the primary's top-k
   * items under the primary's scores and under the shadow's: does the shadow order the items the
   * caller was shown the same way? Undefined when it is not defined: fewer than 2 items, or
   * every item tied on one side.
   */
  rankCorrelation?: number;
  /** Mean and largest |shadow - primary| over the candidates both scored finitely. */
  meanAbsDelta?: number;
  maxAbsDelta?: number;
  /** Candidates where either score is NaN or infinite (ranked last, as the rank path does). */
  nonFinite: number;
}

/**
 * Compares two score vectors over the same candidates (index i is candidate i in both). Ranks
 * as the rank path does: best score first, ties in candidate order, non-finite scores last.
 * Pure; O(n log n) for n candidates (about a millisecond at 3,000), run off the response path.
 */
export function compareShadow(
  primary: ArrayLike<number>,
  shadow: ArrayLike<number>,
  k: number,
): ShadowComparison {
  const n = primary.length;
  if (shadow.length !== n)
    throw new RangeError(`scores of ${n} and ${shadow.length} candidates cannot be compared`);
  const top = Math.max(0, Math.min(Math.floor(k), n));
  const primaryTop = ranking(primary).subarray(0, top);
  const shadowTop = new Set(ranking(shadow).subarray(0, top));
  let overlap = 0;
  for (const i of primaryTop) if (shadowTop.has(i)) overlap++;

  let nonFinite = 0;
  let mean = 0;
  let max = 0;
  for (let i = 0; i < n; i++) {
    if (!Number.isFinite(primary[i]) || !Number.isFinite(shadow[i])) {
      nonFinite++;
      continue;
    }
    // Finite scores a whole double range apart overflow; the largest double stands in.
    const delta = Math.min(Math.abs(shadow[i] - primary[i]), Number.MAX_VALUE);
    // A running mean: a sum of huge deltas would overflow where their mean does not.
    mean += (delta - mean) / (i + 1 - nonFinite);
    if (delta > max) max = delta;
  }
  const comparison: ShadowComparison = {
    candidates: n,
    k: top,
    overlapAtK: top === 0 ? 1 : overlap / top,
    nonFinite,
  };
  const rho = spearman(
    Array.from(primaryTop, (i) => primary[i]),
    Array.from(primaryTop, (i) => shadow[i]),
  );
  if (rho !== undefined) comparison.rankCorrelation = rho;
  if (n > nonFinite) {
    comparison.meanAbsDelta = mean;
    comparison.maxAbsDelta = max;
  }
  return comparison;
}

/** Candidate indexes, best first; ties keep candidate order; non-finite scores last. */
function ranking(scores: ArrayLike<number>): Uint32Array {
  const order = new Uint32Array(scores.length);
  for (let i = 0; i < order.length; i++) order[i] = i;
  // A typed array sorts with a stable sort, so equal keys keep candidate order.
  return order.sort((a, b) => rankKey(scores[b]) - rankKey(scores[a]) || 0);
}

const rankKey = (score: number): number => (Number.isFinite(score) ? score : -Infinity);

/** Spearman's rho: Pearson's correlation of the average ranks; undefined without variance. */
function spearman(x: number[], y: number[]): number | undefined {
  if (x.length < 2) return undefined;
  const [rx, ry] = [averageRanks(x), averageRanks(y)];
  const mean = (x.length + 1) / 2;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < rx.length; i++) {
    const [dx, dy] = [rx[i] - mean, ry[i] - mean];
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  if (sxx === 0 || syy === 0) return undefined;
  return Math.max(-1, Math.min(1, sxy / Math.sqrt(sxx * syy)));
}

/** Rank 1 for the best value; tied values share the mean of the ranks they span. */
function averageRanks(values: number[]): Float64Array {
  const keys = values.map(rankKey);
  const order = [...keys.keys()].sort((a, b) => keys[b] - keys[a] || 0);
  const ranks = new Float64Array(values.length);
  for (let start = 0; start < order.length;) {
    let end = start + 1;
    while (end < order.length && keys[order[end]] === keys[order[start]]) end++;
    const rank = (start + 1 + end) / 2;
    for (let i = start; i < end; i++) ranks[order[i]] = rank;
    start = end;
  }
  return ranks;
}
