/**
 * RedisFeatureStore against the real standalone Redis on 127.0.0.1:6379 (jest globalSetup starts
 * one where none answers). Every key lives under a prefix unique to this run and is deleted after.
 * Round trips are checked on the server (MONITOR, filtered to the store's own connection, so other
 * users of a shared Redis do not count) and on the client (writes to the socket).
 */
import { Logger } from '@nestjs/common';
import { FeatureRow, FeaturesConfig, FeaturesMetrics } from '@app/features';
import {
  connectRedis,
  ItemCache,
  ItemCacheOptions,
  RedisFeatureStore,
  RedisFeatureWriter,
  RedisKeys,
} from '@app/features/testing';
import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Counter, Registry } from 'prom-client';
import { RedisCommandLog } from '../support/redis-command-log';

const PORT = 6379;
const N = 3000;
const prefix = `it:${randomUUID().slice(0, 8)}:`;
const keys = new RedisKeys(prefix);
const itemIds = Array.from({ length: N }, (_, i) => `i${i}`);
const itemRow = (i: number): FeatureRow => ({
  category: `cat${i % 40}`,
  brand: `b${i % 200}`,
  price: Math.round(i * 7.31) / 100,
  ctr_7d: (i % 97) / 1000,
  rating: 1 + (i % 40) / 10,
  age_days: i % 365,
  tags: `t${i % 13}|t${i % 7}`,
  fresh: i % 2 === 0,
});
const userRow: FeatureRow = { age: 31, gender: 'f', city: 'c7', level: 4 };
const roomy: ItemCacheOptions = { maxEntries: 100_000, maxBytes: 64 * 1024 * 1024, ttlMs: 60_000 };

/** Sum of a counter's values whose labels include `labels`. */
const total = async (counter: Counter<string>, labels: Record<string, string> = {}) =>
  (await counter.get()).values
    .filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))
    .reduce((sum, v) => sum + v.value, 0);

describe('RedisFeatureStore (real standalone Redis)', () => {
  const logger = new Logger('redis-feature-store.int-spec');
  let redis: Redis;
  let admin: Redis;
  let log: RedisCommandLog;
  let warn: jest.SpyInstance;

  const store = (options: Partial<ItemCacheOptions> = {}, timeoutMs = 2000) => {
    const metrics = new FeaturesMetrics(new Registry());
    const cache = new ItemCache({ ...roomy, ...options });
    return { store: new RedisFeatureStore(redis, keys, cache, timeoutMs, metrics), metrics, cache };
  };
  const warnings = () => warn.mock.calls.map((call) => String(call[0]));

  beforeAll(async () => {
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    const config = Object.assign(new FeaturesConfig(), { REDIS_URL: `redis://127.0.0.1:${PORT}` });
    redis = (await connectRedis(config, logger)) as Redis;
    admin = new Redis(PORT, '127.0.0.1');
    const writer = new RedisFeatureWriter(admin, keys);
    await writer.putRows(itemIds.map((id, i) => ({ entity: 'item', id, fields: itemRow(i) })));
    await writer.putRows([{ entity: 'user', id: 'u1', fields: userRow }], 1718000000000);
    log = await RedisCommandLog.open(PORT);
  });

  afterAll(async () => {
    log?.close();
    if (admin) {
      const stale = await admin.keys(`${prefix}*`);
      for (let i = 0; i < stale.length; i += 1000) await admin.del(...stale.slice(i, i + 1000));
      await admin.quit();
    }
    await redis?.quit();
    jest.restoreAllMocks();
  });

  beforeEach(() => warn.mockClear());

  it('returns rows in the order asked, undefined for unknown ids, and the user row', async () => {
    const { store: s } = store();
    const fetched = await s.fetch('u1', ['i3', 'nope', 'i1', 'i3', 'i2999']);
    expect(fetched.degraded).toBe(false);
    expect(fetched.user).toEqual(userRow);
    expect(fetched.items).toEqual([itemRow(3), undefined, itemRow(1), itemRow(3), itemRow(2999)]);

    const unknownUser = await s.fetch('nobody', ['i5']);
    expect(unknownUser.user).toBeUndefined();
    expect(unknownUser.items).toEqual([itemRow(5)]);
  });

  it('cold cache, 3,000 candidates: the server sees one GET and one MGET, sent in one write', async () => {
    const { store: s } = store();
    const recording = await log.record(redis);
    const write = jest.spyOn(redis.stream, 'write');
    const fetched = await s.fetch('u1', itemIds);
    const socketWrites = write.mock.calls.length;
    write.mockRestore();
    const commands = await recording.stop();

    expect(commands.map((c) => c[0]).sort()).toEqual(['get', 'mget']);
    expect(commands.find((c) => c[0] === 'get')).toEqual(['get', keys.key('user', 'u1')]);
    expect(commands.find((c) => c[0] === 'mget')).toEqual([
      'mget',
      ...itemIds.map((id) => keys.key('item', id)),
    ]);
    expect(socketWrites).toBe(1);
    expect(fetched.stats).toEqual({ roundTrips: 1, cacheHits: 0, cacheMisses: N });
    expect(fetched.items).toHaveLength(N);
    fetched.items.forEach((row, i) => expect(row).toEqual(itemRow(i)));
  });

  it('warm cache: no MGET at all, only the user GET; every item a hit', async () => {
    const { store: s, metrics } = store();
    await s.fetch('u1', itemIds);

    const recording = await log.record(redis);
    const warm = await s.fetch('u1', itemIds);
    const commands = await recording.stop();

    expect(commands).toEqual([['get', keys.key('user', 'u1')]]);
    expect(warm.stats).toEqual({ roundTrips: 1, cacheHits: N, cacheMisses: 0 });
    expect(warm.items[42]).toEqual(itemRow(42));
    const hits = await total(metrics.cacheHits);
    const misses = await total(metrics.cacheMisses);
    expect(hits / (hits + misses)).toBe(0.5); // one cold fetch, one warm fetch
  });

  it('part-warm cache: one MGET of exactly the misses; hits and misses counted', async () => {
    const { store: s, metrics } = store();
    await s.fetch('u1', itemIds.slice(0, 1000));

    const recording = await log.record(redis);
    const fetched = await s.fetch('u1', itemIds.slice(0, 2000));
    const commands = await recording.stop();

    const mgets = commands.filter((c) => c[0] === 'mget');
    expect(mgets).toHaveLength(1);
    expect(mgets[0].slice(1)).toEqual(itemIds.slice(1000, 2000).map((id) => keys.key('item', id)));
    expect(fetched.stats).toEqual({ roundTrips: 1, cacheHits: 1000, cacheMisses: 1000 });
    expect(fetched.items[1500]).toEqual(itemRow(1500));
    expect(await total(metrics.cacheHits)).toBe(1000);
    expect(await total(metrics.cacheMisses)).toBe(2000);
    // Each hit comes with its holder (the cache entry: the same object on every fetch, holding the
    // row returned); a row read by this fetch with none.
    const again = await s.fetch('u1', itemIds.slice(0, 2000));
    for (const i of [0, 999]) {
      expect(fetched.itemHolders?.[i]?.row).toBe(fetched.items[i]);
      expect(again.itemHolders?.[i]).toBe(fetched.itemHolders?.[i]);
    }
    expect(fetched.itemHolders?.[1500]).toBeUndefined();
    expect(again.itemHolders?.[1500]?.row).toBe(again.items[1500]);
    // The holders' memos come copied, for the row handed out only.
    Object.assign(again.itemHolders![0]!, { memoRow: again.items[0], memoKey: 3, memoValue: 9 });
    Object.assign(again.itemHolders![1]!, { memoRow: again.items[0], memoKey: 3, memoValue: 9 });
    const memos = (await s.fetch('u1', itemIds.slice(0, 3))).itemMemos!;
    expect(Array.from(memos.keys)).toEqual([3, 0, 0]);
    expect(Array.from(memos.values)).toEqual([9, 0, 0]);
  });

  it('caches unknown ids as absent, and reads them again once their TTL has passed', async () => {
    const { store: s } = store({ ttlMs: 150 });
    const ids = ['unknown-1', 'unknown-2'];
    const first = await s.fetch('u1', ids);
    expect(first.items).toEqual([undefined, undefined]);
    expect(first.stats.cacheMisses).toBe(2);

    await admin.set(keys.key('item', 'unknown-1'), JSON.stringify({ price: 5 }));
    const recording = await log.record(redis);
    const second = await s.fetch('u1', ids);
    expect((await recording.stop()).map((c) => c[0])).toEqual(['get']);
    expect(second.stats).toMatchObject({ cacheHits: 2, cacheMisses: 0 });
    expect(second.items).toEqual([undefined, undefined]);

    await sleep(250);
    const third = await s.fetch('u1', ids);
    expect(third.stats).toMatchObject({ cacheHits: 0, cacheMisses: 2 });
    expect(third.items).toEqual([{ price: 5 }, undefined]);
  });

  it('a corrupt blob or wrong-typed fields: undefined or dropped fields, counted, warned by key', async () => {
    await admin.set(keys.key('item', 'corrupt'), '{"price": 9.9, "categ');
    await admin.set(keys.key('item', 'array'), '[1,2,3]');
    await admin.set(
      keys.key('item', 'wrong-typed'),
      JSON.stringify({ price: { value: 3 }, category: 'c1', tags: ['a'], brand: null }),
    );
    await admin.set(keys.key('user', 'corrupt-user'), 'not json at all');
    const { store: s, metrics } = store();

    const fetched = await s.fetch('corrupt-user', ['corrupt', 'i7', 'array', 'wrong-typed']);
    expect(fetched.degraded).toBe(false);
    expect(fetched.user).toBeUndefined();
    expect(fetched.items).toEqual([undefined, itemRow(7), undefined, { category: 'c1' }]);

    expect(await total(metrics.badValues, { reason: 'corrupt_blob', source: 'redis' })).toBe(3);
    expect(await total(metrics.badValues, { reason: 'wrong_type', source: 'redis' })).toBe(3);
    const warned = warnings().join('\n');
    for (const id of ['corrupt', 'array', 'wrong-typed'])
      expect(warned).toContain(`${keys.key('item', id)}:`);
    expect(warned).toContain(`${keys.key('user', 'corrupt-user')}:`);
    expect(warned).toMatch(/price, tags, brand/);

    // The item rows are cached as decoded: a second fetch counts nothing new for them.
    const again = await s.fetch('u1', ['corrupt', 'wrong-typed']);
    expect(again.items).toEqual([undefined, { category: 'c1' }]);
    expect(again.stats.cacheHits).toBe(2);
    expect(await total(metrics.badValues)).toBe(6);
  });

  it('a key holding another Redis type (a hash): defaults, counted, warned, not degraded', async () => {
    await admin.hset(keys.key('user', 'hash-user'), { age: '40' });
    await admin.hset(keys.key('item', 'hash-item'), { price: '4' });
    await admin.rpush(keys.key('item', 'list-item'), 'x');
    const { store: s, metrics } = store();

    const fetched = await s.fetch('hash-user', ['hash-item', 'i8', 'unknown-item', 'list-item']);
    expect(fetched.degraded).toBe(false);
    expect(fetched.user).toBeUndefined();
    // MGET answers nil for a non-string key: the item takes its defaults at once, as an unknown
    // one does. The user key's GET fails with WRONGTYPE (counted at once); the nil item keys go to
    // the background check, whose TYPEs tell the hash and the list from the unknown item.
    expect(fetched.items).toEqual([undefined, itemRow(8), undefined, undefined]);
    expect(await total(metrics.degraded)).toBe(0);
    for (const until = Date.now() + 2000; s.typeCheck.busy && Date.now() < until;) await sleep(5);
    expect(s.typeCheck.busy).toBe(false);
    expect(await total(metrics.badValues, { source: 'redis', reason: 'wrong_type' })).toBe(3);
    const warned = warnings().join('\n');
    expect(warned).toContain(keys.key('user', 'hash-user'));
    expect(warned).toContain(`${keys.key('item', 'hash-item')}: a hash key, not a string`);
    expect(warned).toContain(`${keys.key('item', 'list-item')}: a list key, not a string`);
    expect(warned).not.toContain(keys.key('item', 'unknown-item'));
  });

  it('a Redis that answers too late: degraded within about the deadline; the late reply fills the cache', async () => {
    const { store: s, metrics, cache } = store({}, 30);
    const ids = itemIds.slice(0, 500);
    const pauser = new Redis(PORT, '127.0.0.1');
    try {
      // CLIENT PAUSE holds every client's commands on the server for 300 ms (DEBUG SLEEP would
      // need enable-debug-command); the commands are read and answered once it ends.
      await pauser.client('PAUSE', 300, 'ALL');
      const started = performance.now();
      // The caller's own list, emptied once it has its answer, as the rank path does: the late
      // reply must fill the cache under the ids asked for all the same.
      const asked = [...ids];
      const fetched = await s.fetch('u1', asked);
      const elapsed = performance.now() - started;
      asked.length = 0;

      expect(fetched.degraded).toBe(true);
      expect(fetched.user).toBeUndefined();
      expect(fetched.items.every((row) => row === undefined)).toBe(true);
      expect(elapsed).toBeGreaterThanOrEqual(29);
      expect(elapsed).toBeLessThan(150);
      expect(await total(metrics.degraded, { reason: 'timeout' })).toBe(1);
      expect(warnings().join('\n')).toMatch(/feature fetch timeout/);
      expect(cache.size).toBe(0);

      const until = Date.now() + 3000;
      while (cache.size < ids.length && Date.now() < until) await sleep(10);
      expect(cache.size).toBe(ids.length);
      expect(cache.get('i10')?.row).toEqual(itemRow(10));
      expect(cache.get(undefined as unknown as string)).toBeUndefined();

      const after = await s.fetch('u1', ids);
      expect(after.degraded).toBe(false);
      expect(after.stats).toMatchObject({ cacheHits: 500, cacheMisses: 0 });
      expect(after.items[499]).toEqual(itemRow(499));
    } finally {
      await pauser.quit();
    }
  });

  it('a Redis that is down: degraded at once (no wait for the deadline), never a throw', async () => {
    const config = Object.assign(new FeaturesConfig(), { REDIS_URL: 'redis://127.0.0.1:1' });
    const down = await connectRedis(config, logger, 100);
    try {
      const metrics = new FeaturesMetrics(new Registry());
      const cache = new ItemCache(roomy);
      cache.fill('cached', { row: { price: 1 }, ts: 0, bytes: 11 });
      const s = new RedisFeatureStore(down, keys, cache, 1000, metrics);
      const started = performance.now();
      const fetched = await s.fetch('u1', ['cached', 'i1']);
      expect(performance.now() - started).toBeLessThan(200);
      expect(fetched).toMatchObject({ degraded: true, user: undefined });
      expect(fetched.items).toEqual([{ price: 1 }, undefined]);
      expect(await total(metrics.degraded, { reason: 'error' })).toBe(1);
    } finally {
      down.disconnect();
    }
  });
});
