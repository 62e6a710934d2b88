import { FeatureRow } from '@app/features';

/** A rank call as both edges (HTTP, Kafka) hand it to the pipeline after shape validation. */
export interface RankRequest {
  user: { id: string; features?: FeatureRow };
  context?: FeatureRow;
  candidates: readonly { id: string; features?: FeatureRow }[];
  /** How many items to return; defaults to the bundle's postprocess.topK. */
  topK?: number;
  /** Milliseconds the caller will wait; rows not scored by then are dropped. */
  timeoutMs?: number;
  requestId?: string;
}

export interface RankedItem {
  id: string;
  /** The fused score; null when it was NaN or infinite (then `nonFinite` is true). */
  score: number | null;
  /** Present only on items whose score was not finite: they rank after every finite score. */
  nonFinite?: true;
}

export interface RankResult {
  scene: string;
  version: string;
  /** True when features could not all be fetched in time and defaults stood in. */
  degraded: boolean;
  items: RankedItem[];
  /** How many candidates (returned or not) got a non-finite score; present only when > 0. */
  nonFiniteScores?: number;
}
