import { Registry } from 'prom-client';
import { compareShadow } from './shadow-comparison';
import { ShadowMetrics } from './shadow.metrics';

describe('ShadowMetrics', () => {
  const setup = () => {
    const registry = new Registry();
    return { registry, metrics: new ShadowMetrics(registry) };
  };
  const labels = 'scene="feed",version="v5",primary="v1"';
  /** rho 0.8, overlap 1, |delta| mean 0.08 and max 0.1 (see shadow-comparison.spec.ts). */
  const twoPairsSwapped = () =>
    compareShadow([0.9, 0.8, 0.7, 0.6, 0.5], [0.8, 0.9, 0.7, 0.5, 0.6], 5);

  it('records each comparison in histograms per scene, shadow version and primary version', async () => {
    const { registry, metrics } = setup();
    metrics.record('feed', 'v5', 'v1', twoPairsSwapped());
    metrics.record('feed', 'v5', 'v1', compareShadow([5, 4, 3, 2, 1], [1, 2, 3, 4, 5], 2));
    const text = await registry.metrics();
    expect(text).toContain(`ranker_shadow_comparisons_total{${labels}} 2`);
    // rho 0.8 and -1: sum -0.2, one at or below -1, two at or below 0.8.
    expect(text).toContain(`ranker_shadow_rank_correlation_bucket{le="-1",${labels}} 1`);
    expect(text).toContain(`ranker_shadow_rank_correlation_bucket{le="0.8",${labels}} 2`);
    expect(text).toMatch(
      new RegExp(`ranker_shadow_rank_correlation_sum\\{${labels}\\} -0\\.19999`),
    );
    // overlap 1 and 0.
    expect(text).toContain(`ranker_shadow_overlap_at_k_bucket{le="0",${labels}} 1`);
    expect(text).toContain(`ranker_shadow_overlap_at_k_sum{${labels}} 1`);
    // max |delta| 0.1 and 4.
    expect(text).toContain(`ranker_shadow_score_delta_max_abs_bucket{le="0.1",${labels}} 1`);
    expect(text).toContain(`ranker_shadow_score_delta_max_abs_bucket{le="10",${labels}} 2`);
  });

  it('keeps running summaries for the admin API, and failures by reason', async () => {
    const { registry, metrics } = setup();
    metrics.record('feed', 'v5', 'v1', twoPairsSwapped());
    metrics.record('feed', 'v5', 'v1', compareShadow([3, 2, 1, 0], [0, 0, 0, NaN], 3));
    metrics.recordFailure('feed', 'v5', 'v1', 'timeout');
    metrics.record('news', 'v2', 'v1', compareShadow([1], [1], 1));
    const [feed] = metrics.summaries('feed');
    expect(feed).toMatchObject({
      scene: 'feed',
      version: 'v5',
      primary: 'v1',
      comparisons: 2,
      meanOverlapAtK: 1,
      meanRankCorrelation: 0.8, // the constant shadow's correlation is undefined: not averaged
      nonFiniteScores: 1,
      failures: { timeout: 1 },
    });
    // Deltas: 0.08 mean / 0.1 max, then |0-3|, |0-2|, |0-1| -> 2 mean / 3 max.
    expect(feed.meanAbsDelta).toBeCloseTo((0.08 + 2) / 2, 12);
    expect(feed.maxAbsDelta).toBe(3);
    expect(metrics.summaries()).toHaveLength(2);
    expect(await registry.metrics()).toContain(
      'ranker_shadow_failures_total{scene="feed",version="v5",reason="timeout"} 1',
    );
    metrics.forget('feed');
    expect(metrics.summaries().map((s) => s.scene)).toEqual(['news']);
  });
});
