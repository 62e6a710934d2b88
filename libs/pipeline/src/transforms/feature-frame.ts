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

/** Read for every row of a frame whose candidates sent no features: undefined at every index. */
export const NO_ITEM_FEATURES: readonly (FeatureRow | undefined)[] = Object.freeze([]);

/**
 * A frame, with all its fields in one order whoever makes it: a request's rank, a new version's
 * dry run and golden requests, the item-side warm-up, a shadow run. The code that reads frames
 * (the scorer, the tensor builder, the item side) is optimized for the frames it has seen: frames
 * of four literals with four field sets were four hidden classes, and a new version's first dry
 * run deoptimized the serving path ("wrong map" at `frame.itemIds`) while traffic ran.
 */
export function featureFrame(fields: FeatureFrame): FeatureFrame {
  return {
    userId: fields.userId,
    userRequest: fields.userRequest,
    userStored: fields.userStored,
    context: fields.context,
    itemIds: fields.itemIds,
    itemRequest: fields.itemRequest,
    itemStored: fields.itemStored,
    itemHolders: fields.itemHolders,
    itemMemos: fields.itemMemos,
    onBadValue: fields.onBadValue,
  };
}

/**
 * A per-row array of a frame, `at(r)` at each row, made as the stores and the rank path make
 * theirs (`new Array(n)`, then written by index): one elements kind for every frame's arrays, so
 * reading them by row stays monomorphic whoever made the frame.
 */
export function rowArray<T>(n: number, at: (row: number) => T): T[] {
  const out = new Array<T>(n);
  for (let r = 0; r < n; r++) out[r] = at(r);
  return out;
}
