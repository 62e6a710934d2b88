import { Logger } from '@nestjs/common';
import { ThrottledWarnings } from '@app/common';
import calculateSlot from 'cluster-key-slot';
import { Cluster } from 'ioredis';
import { CachedItem, ItemCache } from '../cache/item-cache';
import { emptyItemMemos, FeatureRow, ItemHolder } from '../feature-row';
import { FeatureFetch, FeatureStore, FetchOptions } from '../feature-store.port';
import { FeaturesMetrics } from '../features.metrics';
import { decodeBlob } from './feature-blob';
import { RedisClient } from './redis-connection';
import { RedisKeys } from './redis-keys';
import { WrongTypeCheck } from './wrong-type-check';

const TIMEOUT = Symbol('timeout');

/**
 * Features from Redis (one JSON blob per entity) behind the in-process item cache. Per request:
 * one GET for the user and one MGET for all item cache misses, issued in the same tick so the
 * auto-pipeline sends them together; in Cluster mode misses are grouped by slot, one MGET per
 * slot, and the auto-pipeline sends each node's share in one write, all nodes in parallel.
 * The whole fetch waits at most the deadline; then missing rows take their defaults and the
 * answer is flagged degraded. Late replies still fill the cache. Item keys MGET answered nil for
 * go to a background check (WrongTypeCheck) that finds keys of another Redis type among them.
 */
export class RedisFeatureStore extends FeatureStore {
  private readonly warnings = new ThrottledWarnings(new Logger(RedisFeatureStore.name));
  /** Exposed for specs: whether a check of nil keys is in flight. */
  readonly typeCheck: WrongTypeCheck;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
    readonly cache: ItemCache,
    private readonly defaultTimeoutMs: number,
    private readonly metrics?: FeaturesMetrics,
  ) {
    super();
    this.typeCheck = new WrongTypeCheck(
      (key) => this.redis.type(key),
      (key, type) => this.countWrongType(key, `a ${type} key, not a string`),
    );
  }

  override heldItems(): Iterable<[string, FeatureRow]> {
    return this.cache.heldRows();
  }

  async fetch(
    userId: string,
    itemIds: readonly string[],
    options: FetchOptions = {},
  ): Promise<FeatureFetch> {
    const started = performance.now();
    const items = new Array<FeatureRow | undefined>(itemIds.length);
    // A hit's cache entry is its holder: the tensor builder keeps its per-row work there.
    const itemHolders = new Array<ItemHolder | undefined>(itemIds.length);
    const itemMemos = emptyItemMemos(itemIds.length);
    const misses = this.cache.lookup(itemIds, this.cache.now(), items, itemHolders, itemMemos);
    const hits = itemIds.length - misses.length;
    // Rows read from here on are cached only if no update seen since then is newer.
    const readStartedAt = this.cache.now();
    const userKey = this.keys.key('user', userId);
    // The misses' ids, taken now: a late reply fills the cache after this fetch has answered, when
    // the caller may have emptied `itemIds` (the rank path does, see FeatureStore.fetch).
    const missIds = misses.map((i) => itemIds[i]);
    const missKeys = missIds.map((id) => this.keys.key('item', id));
    const userRead = this.redis
      .get(userKey)
      .catch((error: Error) => this.wrongType(userKey, error));
    // Cluster: keys by hash slot, computed once for the MGETs and the round-trip count.
    const slots = this.redis instanceof Cluster ? bySlot(missKeys) : undefined;
    const itemRead =
      misses.length > 0
        ? this.readItems(missKeys, slots)
        : Promise.resolve([] as (string | null)[]);
    const roundTrips = this.roundTrips(userKey, slots);

    const filled = itemRead.then((blobs) =>
      this.fillCache(missIds, missKeys, blobs, readStartedAt),
    );
    const timeoutMs = options.timeoutMs ?? this.defaultTimeoutMs;
    const [user, missRows] = await Promise.all([
      within(userRead, timeoutMs),
      within(filled, timeoutMs),
    ]);

    let degraded: 'timeout' | 'error' | undefined;
    for (const outcome of [user, missRows]) if (outcome.failure) degraded ??= outcome.failure;
    if (!missRows.failure) misses.forEach((i, k) => (items[i] = missRows.value[k]));
    const userRow =
      user.failure || user.value === null ? undefined : this.decode(userKey, user.value)?.row;

    const m = this.metrics;
    m?.cacheHits.inc(hits);
    m?.cacheMisses.inc(misses.length);
    m?.keysFetched.inc({ entity: 'item' }, misses.length);
    m?.keysFetched.inc({ entity: 'user' }, 1);
    m?.roundTrips.observe(roundTrips);
    m?.fetchMs.observe({ result: degraded ? 'degraded' : 'ok' }, performance.now() - started);
    if (degraded) {
      m?.degraded.inc({ reason: degraded });
      this.warnings.warn(
        `requestId=${options.requestId ?? '-'}: feature fetch ${degraded}; missing features take their defaults`,
      );
    }
    return {
      user: userRow,
      items,
      itemHolders,
      itemMemos,
      degraded: degraded !== undefined,
      stats: { roundTrips, cacheHits: hits, cacheMisses: misses.length },
    };
  }

  /** MGET of all keys; in Cluster mode one MGET per hash slot (never CROSSSLOT). */
  private async readItems(
    keys: string[],
    slots: Map<number, number[]> | undefined,
  ): Promise<(string | null)[]> {
    if (!slots) return this.redis.mget(keys);
    const out = new Array<string | null>(keys.length);
    await Promise.all(
      [...slots.values()].map(async (indexes) => {
        const values = await this.redis.mget(indexes.map((i) => keys[i]));
        indexes.forEach((i, k) => (out[i] = values[k]));
      }),
    );
    return out;
  }

  /** Standalone: one auto-pipelined write. Cluster: one per node holding any of the keys. */
  private roundTrips(userKey: string, slots: Map<number, number[]> | undefined): number {
    if (!(this.redis instanceof Cluster) || !slots) return 1;
    const owners = this.redis.slots;
    const nodes = new Set<string>([owners[calculateSlot(userKey)]?.join(',') ?? '?']);
    for (const slot of slots.keys()) nodes.add(owners[slot]?.join(',') ?? '?');
    return nodes.size;
  }

  private fillCache(
    ids: readonly string[],
    keys: string[],
    blobs: (string | null)[],
    readStartedAt: number,
  ): (FeatureRow | undefined)[] {
    let nil: string[] | undefined;
    const rows = ids.map((id, k) => {
      const blob = blobs[k];
      if (blob === null) (nil ??= []).push(keys[k]);
      const decoded = blob === null ? undefined : this.decode(keys[k], blob);
      const item: CachedItem = {
        row: decoded?.row,
        ts: decoded?.ts ?? 0,
        bytes: blob?.length ?? 16,
      };
      this.cache.fill(id, item, readStartedAt);
      return item.row;
    });
    // nil is an unknown item or a key of another type: the check tells them apart, off this path.
    if (nil !== undefined) this.typeCheck.offer(nil);
    return rows;
  }

  /** GET of a key holding a hash, list, ...: bad data (defaults, counted), not a Redis outage. */
  private wrongType(key: string, error: Error): null {
    if (!error.message.startsWith('WRONGTYPE')) throw error;
    this.countWrongType(key, 'not a string key');
    return null;
  }

  /** A key of another Redis type, found by its GET or by the background check: counted, warned. */
  private countWrongType(key: string, what: string): void {
    this.metrics?.badValues.inc({ source: 'redis', reason: 'wrong_type' });
    this.warnings.warn(`${key}: ${what}; its features take their defaults`);
  }

  private decode(key: string, blob: string): { row: FeatureRow; ts: number } | undefined {
    const decoded = decodeBlob(blob);
    if (!decoded.ok) {
      this.metrics?.badValues.inc({ source: 'redis', reason: 'corrupt_blob' });
      this.warnings.warn(`${key}: ${decoded.reason}; its features take their defaults`);
      return undefined;
    }
    if (decoded.badFields.length > 0) {
      this.metrics?.badValues.inc(
        { source: 'redis', reason: 'wrong_type' },
        decoded.badFields.length,
      );
      this.warnings.warn(
        `${key}: ${decoded.badFields.join(', ')} not a string, number or boolean; default used`,
      );
    }
    return decoded;
  }
}

type Outcome<T> =
  { failure?: undefined; value: T } | { failure: 'timeout' | 'error'; value?: undefined };

/** Settles within `ms`: the value, or why not. Never rejects. */
function within<T>(promise: Promise<T>, ms: number): Promise<Outcome<T>> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMEOUT>(
    (resolve) => (timer = setTimeout(resolve, ms, TIMEOUT)),
  );
  return Promise.race([promise, timeout])
    .then(
      (value): Outcome<T> => (value === TIMEOUT ? { failure: 'timeout' } : { value: value as T }),
      (): Outcome<T> => ({ failure: 'error' }),
    )
    .finally(() => clearTimeout(timer));
}

/** Indexes of `keys` grouped by their Redis Cluster hash slot. */
function bySlot(keys: readonly string[]): Map<number, number[]> {
  const groups = new Map<number, number[]>();
  keys.forEach((key, i) => {
    const slot = calculateSlot(key);
    const group = groups.get(slot);
    if (group) group.push(i);
    else groups.set(slot, [i]);
  });
  return groups;
}
