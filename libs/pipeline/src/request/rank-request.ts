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
  score: number;
}

export interface RankResult {
  scene: string;
  version: string;
  /** True when features could not all be fetched in time and defaults stood in. */
  degraded: boolean;
  items: RankedItem[];
}
