import { FeatureRow } from '@app/features';

/**
 * Everything known about one request's features, as fetched: nothing is merged per candidate.
 * Request-supplied features take precedence over stored ones.
 */
export interface FeatureFrame {
  /** Stored user row overlaid with the request's user features, plus `id`. */
  user: FeatureRow;
  context: FeatureRow;
  itemIds: readonly string[];
  /** Features sent with each candidate, if any. */
  itemRequest: readonly (FeatureRow | undefined)[];
  /** Features from the store, in candidate order; undefined where the store has none. */
  itemStored: readonly (FeatureRow | undefined)[];
}
