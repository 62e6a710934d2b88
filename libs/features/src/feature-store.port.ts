import { FeatureRow, ItemHolder, ItemMemos } from './feature-row';

export interface FetchOptions {
  /** Milliseconds to wait for the store; past it, missing rows take their defaults (degraded). */
  timeoutMs?: number;
  requestId?: string;
}

export interface FetchStats {
  /** Redis request/response exchanges this fetch waited on (per connection; parallel ones count each). */
  roundTrips: number;
  cacheHits: number;
  cacheMisses: number;
}

/**
 * One fetch's answer. Its lists are made for this fetch and are the caller's: the rank path
 * empties them once its request has answered (see RankService), so a store never hands out a list
 * it keeps or shares.
 */
export interface FeatureFetch {
  user: FeatureRow | undefined;
  /** Rows in the order of the ids asked for; undefined where the store has none. */
  items: (FeatureRow | undefined)[];
  /**
   * Where the store holds each row (see ItemHolder), in the same order; undefined where it has
   * none to hand out (a row read from Redis by this very fetch) or for every row.
   */
  itemHolders?: (ItemHolder | undefined)[];
  /** The holders' memos as the fetch read them (see ItemMemos), where there are holders. */
  itemMemos?: ItemMemos;
  /** True when the store was slow or down and some rows may be missing for that reason. */
  degraded: boolean;
  stats: FetchStats;
}

/**
 * Where user and item features come from. Adapters: in-memory (embedded default, seeded from a
 * file) and Redis (standalone or Cluster, with an in-process item cache). An absent entity is
 * `undefined`, never an error: the bundle's declared defaults fill it in. A fetch never throws
 * because the store is unavailable; it reports `degraded` instead.
 */
export abstract class FeatureStore {
  /**
   * The user's row and the items' rows, in the order of `itemIds`. A store reads `itemIds` only
   * until the returned promise settles: work that outlives it (a late Redis reply filling the
   * item cache) keeps what it needs of them, since the caller may empty the list once it has its
   * answer (the rank path does).
   */
  abstract fetch(
    userId: string,
    itemIds: readonly string[],
    options?: FetchOptions,
  ): Promise<FeatureFetch>;

  /**
   * Item rows this process holds now (the Redis store's item cache, every row of the in-memory
   * store), by id, without a round trip: what a new bundle version computes its item side from
   * before it serves. Rows come as `fetch` returns them (the same objects).
   */
  heldItems(): Iterable<[string, FeatureRow]> {
    return [];
  }
}
