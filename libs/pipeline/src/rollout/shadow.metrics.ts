import { Injectable } from '@nestjs/common';
import { Counter, Histogram, Registry } from 'prom-client';
import { ShadowComparison } from './shadow-comparison';

/** `version` is the shadow's, `primary` the version that served the request. */
const LABELS = ['scene', 'version', 'primary'] as const;
type Label = (typeof LABELS)[number];

/** Running figures of one shadow against one primary version, for the admin API. */
export interface ShadowSummary {
  scene: string;
  version: string;
  primary: string;
  comparisons: number;
  /** Means over the comparisons that had the figure (the correlation may be undefined). */
  meanRankCorrelation?: number;
  meanOverlapAtK: number;
  meanAbsDelta?: number;
  /** Largest |shadow - primary| of any candidate since the summary began. */
  maxAbsDelta?: number;
  nonFiniteScores: number;
  /** Shadow runs that produced no comparison, by reason (failed, timed out, shed). */
  failures: Record<string, number>;
}

interface Running {
  summary: ShadowSummary;
  correlations: number;
  deltas: number;
}

const DELTA_BUCKETS = [1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 10];

/**
 * Records how a shadow version's scores differ from the serving version's (compareShadow), per
 * scene, shadow version and primary version: histograms for Prometheus, plus running summaries
 * for the admin API and status page.
 */
@Injectable()
export class ShadowMetrics {
  readonly comparisons: Counter<Label>;
  readonly failures: Counter<'scene' | 'version' | 'reason'>;
  readonly nonFiniteScores: Counter<Label>;
  readonly rankCorrelation: Histogram<Label>;
  readonly overlapAtK: Histogram<Label>;
  readonly meanAbsDelta: Histogram<Label>;
  readonly maxAbsDelta: Histogram<Label>;
  private readonly running = new Map<string, Running>();

  constructor(registry: Registry) {
    const registers = [registry];
    const labelNames = LABELS;
    this.comparisons = new Counter({
      name: 'ranker_shadow_comparisons_total',
      help: 'Requests scored by the shadow version and compared with the serving one',
      labelNames,
      registers,
    });
    this.failures = new Counter({
      name: 'ranker_shadow_failures_total',
      help: 'Shadow runs that produced no comparison, per reason; the caller was never affected',
      labelNames: ['scene', 'version', 'reason'],
      registers,
    });
    this.nonFiniteScores = new Counter({
      name: 'ranker_shadow_nonfinite_scores_total',
      help: 'Candidates whose primary or shadow score was NaN or infinite (left out of the deltas)',
      labelNames,
      registers,
    });
    this.rankCorrelation = new Histogram({
      name: 'ranker_shadow_rank_correlation',
      help: "Spearman's rho of the served top-k under the serving and the shadow scores",
      labelNames,
      buckets: [-1, -0.5, 0, 0.5, 0.8, 0.9, 0.95, 0.98, 0.99, 0.999, 1],
      registers,
    });
    this.overlapAtK = new Histogram({
      name: 'ranker_shadow_overlap_at_k',
      help: 'Share (0-1) of the served top-k also in the shadow top-k',
      labelNames,
      buckets: [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1],
      registers,
    });
    this.meanAbsDelta = new Histogram({
      name: 'ranker_shadow_score_delta_mean_abs',
      help: 'Mean |shadow - serving| score over the candidates of a request',
      labelNames,
      buckets: DELTA_BUCKETS,
      registers,
    });
    this.maxAbsDelta = new Histogram({
      name: 'ranker_shadow_score_delta_max_abs',
      help: 'Largest |shadow - serving| score among the candidates of a request',
      labelNames,
      buckets: DELTA_BUCKETS,
      registers,
    });
  }

  /** One comparison of the shadow `version` against the `primary` version that served. */
  record(scene: string, version: string, primary: string, comparison: ShadowComparison): void {
    const labels = { scene, version, primary };
    this.comparisons.inc(labels);
    this.overlapAtK.observe(labels, comparison.overlapAtK);
    if (comparison.nonFinite > 0) this.nonFiniteScores.inc(labels, comparison.nonFinite);
    if (comparison.rankCorrelation !== undefined)
      this.rankCorrelation.observe(labels, comparison.rankCorrelation);
    if (comparison.meanAbsDelta !== undefined) {
      this.meanAbsDelta.observe(labels, comparison.meanAbsDelta);
      this.maxAbsDelta.observe(labels, comparison.maxAbsDelta ?? comparison.meanAbsDelta);
    }
    this.summarise(labels, comparison);
  }

  /** A shadow run that produced no comparison (`failed`, `timeout`, `shed`, ...). */
  recordFailure(scene: string, version: string, primary: string, reason: string): void {
    this.failures.inc({ scene, version, reason });
    const { summary } = this.runningOf({ scene, version, primary });
    summary.failures[reason] = (summary.failures[reason] ?? 0) + 1;
  }

  /** The running summaries, of one scene or of all. */
  summaries(scene?: string): ShadowSummary[] {
    return [...this.running.values()]
      .map((r) => r.summary)
      .filter((s) => scene === undefined || s.scene === scene)
      .map((s) => ({ ...s, failures: { ...s.failures } }));
  }

  /** Starts a scene's summaries afresh (e.g. when its shadow version changes). */
  forget(scene: string): void {
    for (const [key, r] of this.running) if (r.summary.scene === scene) this.running.delete(key);
  }

  private summarise(labels: Record<Label, string>, c: ShadowComparison): void {
    const r = this.runningOf(labels);
    const s = r.summary;
    s.comparisons++;
    s.meanOverlapAtK += (c.overlapAtK - s.meanOverlapAtK) / s.comparisons;
    s.nonFiniteScores += c.nonFinite;
    if (c.rankCorrelation !== undefined) {
      r.correlations++;
      const mean = s.meanRankCorrelation ?? 0;
      s.meanRankCorrelation = mean + (c.rankCorrelation - mean) / r.correlations;
    }
    if (c.meanAbsDelta !== undefined) {
      r.deltas++;
      const mean = s.meanAbsDelta ?? 0;
      s.meanAbsDelta = mean + (c.meanAbsDelta - mean) / r.deltas;
      s.maxAbsDelta = Math.max(s.maxAbsDelta ?? 0, c.maxAbsDelta ?? 0);
    }
  }

  private runningOf({ scene, version, primary }: Record<Label, string>): Running {
    const key = JSON.stringify([scene, version, primary]);
    let r = this.running.get(key);
    if (!r) {
      r = {
        summary: {
          scene,
          version,
          primary,
          comparisons: 0,
          meanOverlapAtK: 0,
          nonFiniteScores: 0,
          failures: {},
        },
        correlations: 0,
        deltas: 0,
      };
      this.running.set(key, r);
    }
    return r;
  }
}
