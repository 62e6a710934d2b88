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
  /** Told of each value present but unusable as its declared type (the default is used). */
  onBadValue?: (source: 'user' | 'item' | 'context', row: number, feature: string) => void;
}
