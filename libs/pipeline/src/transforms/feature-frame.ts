import { FeatureRow, ItemHolder, ItemMemos } from '@app/features';
import { FeatureSource } from '../bundle/bundle-definition';

/** Where a value was read: sent with the request, or fetched from the feature store. */
export type FeatureLayer = 'request' | 'stored';

/**
 * Everything known about one request's features, as sent and as fetched: nothing is merged, so a
 * request value unusable as its declared type can fall back to the stored one (then the default).
 */
export interface FeatureFrame {
  userId: string;
  /** `user.features` of the request, if any. */
  userRequest: FeatureRow | undefined;
  /** The user's row from the store; undefined where the store has none. */
  userStored: FeatureRow | undefined;
  /** `context` of the request (context features are never stored). */
  context: FeatureRow | undefined;
  itemIds: readonly string[];
  /** Features sent with each candidate, if any. */
  itemRequest: readonly (FeatureRow | undefined)[];
  /** Features from the store, in candidate order; undefined where the store has none. */
  itemStored: readonly (FeatureRow | undefined)[];
  /** Where the store holds each stored row, if it says (FeatureFetch.itemHolders). */
  itemHolders?: readonly (ItemHolder | undefined)[];
  /** The holders' memos as the fetch read them (FeatureFetch.itemMemos). */
  itemMemos?: ItemMemos;
  /**
   * Told of each value present but unusable as its declared type, or not finite in a column that
   * reads it; the next layer (stored value, then the declared default) is used instead. A value
   * read by several columns may be reported once per column.
   */
  onBadValue?: (source: FeatureSource, layer: FeatureLayer, row: number, feature: string) => void;
}
