/**
 * RedisFeatureStore and RedisFeatureWriter against the real three-master Redis Cluster on
 * 127.0.0.1:7000-7002 (test/services/redis-cluster.sh; jest globalSetup starts it where none
 * answers). Keys live under a prefix unique to this run and are deleted after. What each master
 * executed is read from its MONITOR feed, filtered to the store's own connection to it.
 */
import { Logger } from '@nestjs/common';
import { FeatureRow, FeaturesConfig, FeaturesMetrics } from '@app/features';
import {
  connectRedis,
  ItemCache,
  RedisFeatureStore,
  RedisFeatureWriter,
  RedisKeys,
} from '@app/features/testing';
import calculateSlot from 'cluster-key-slot';
import Redis, { Cluster } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { Registry } from 'prom-client';
import { Recording, RedisCommandLog } from '../support/redis-command-log';

const PORTS = [7000, 7001, 7002];
const N = 3000;
const prefix = `itc:${randomUUID().slice(0, 8)}:`;
const keys = new RedisKeys(prefix);
const itemIds = Array.from({ length: N }, (_, i) => `i${i}`);
const itemRow = (i: number): FeatureRow => ({ category: `cat${i % 40}`, price: i / 100 });
const userRow: FeatureRow = { age: 44, city: 'c3' };

describe('RedisFeatureStore (real Redis Cluster, 3 masters)', () => {
  let cluster: Cluster;
  let writer: RedisFeatureWriter;
  const logs = new Map<number, RedisCommandLog>();

  const nodeOf = (key: string) => cluster.slots[calculateSlot(key)][0];
  const newStore = () => {
    const metrics = new FeaturesMetrics(new Registry());
    const cache = new ItemCache({ maxEntries: 100_000, maxBytes: 1 << 26, ttlMs: 60_000 });
    return new RedisFeatureStore(cluster, keys, cache, 2000, metrics);
  };
  /** Records, on every master, the commands of the cluster client's connection to it. */
  const recordMasters = async () => {
    const recordings = new Map<string, Recording>();
    for (const node of cluster.nodes('master')) {
      const log = logs.get(node.options.port as number);
      if (!log) throw new Error(`no MONITOR on ${node.options.port}`);
      recordings.set(`${node.options.host}:${node.options.port}`, await log.record(node));
    }
    return async () => {
      const out = new Map<string, string[][]>();
      for (const [node, recording] of recordings) out.set(node, await recording.stop());
      return out;
    };
  };

  beforeAll(async () => {
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    const config = Object.assign(new FeaturesConfig(), {
      REDIS_CLUSTER_NODES: PORTS.map((p) => `127.0.0.1:${p}`).join(','),
    });
    cluster = (await connectRedis(config, new Logger('cluster.int-spec'))) as Cluster;
    expect(cluster).toBeInstanceOf(Cluster);
    expect(cluster.status).toBe('ready');
    for (const port of PORTS) logs.set(port, await RedisCommandLog.open(port));
    writer = new RedisFeatureWriter(cluster, keys);
    const written = await writer.putRows([
      ...itemIds.map((id, i) => ({ entity: 'item' as const, id, fields: itemRow(i) })),
      { entity: 'user', id: 'u1', fields: userRow },
    ]);
    expect(written).toBe(N + 1);
  });

  afterAll(async () => {
    for (const log of logs.values()) log.close();
    if (cluster) {
      await Promise.all(
        cluster.nodes('master').map(async (node) => {
          const stale = await node.keys(`${prefix}*`);
          // Per key: a multi-key DEL would have to stay within one slot.
          await Promise.all(stale.map((key) => node.del(key)));
        }),
      );
      await cluster.quit();
    }
    jest.restoreAllMocks();
  });

  it('3,000 keys over many slots on all three masters: every row, no CROSSSLOT, 3 round trips', async () => {
    const itemKeys = itemIds.map((id) => keys.key('item', id));
    expect(new Set(itemKeys.map((k) => calculateSlot(k))).size).toBeGreaterThan(2000);
    expect(new Set(itemKeys.map(nodeOf)).size).toBe(3);

    const store = newStore();
    const stop = await recordMasters();
    const writes = cluster.nodes('master').map((node) => jest.spyOn(node.stream, 'write'));
    const fetched = await store.fetch('u1', itemIds);
    const writesPerNode = writes.map((w) => w.mock.calls.length);
    writes.forEach((w) => w.mockRestore());
    const byNode = await stop();

    expect(fetched.degraded).toBe(false);
    expect(fetched.user).toEqual(userRow);
    fetched.items.forEach((row, i) => expect(row).toEqual(itemRow(i)));
    expect(fetched.stats).toEqual({ roundTrips: 3, cacheHits: 0, cacheMisses: N });
    // Each master got its share in one write, all three in parallel.
    expect(writesPerNode).toEqual([1, 1, 1]);

    // Every MGET holds keys of one slot only, owned by the node it went to; together they
    // asked for each item key exactly once; the user GET went to the user key's node.
    const asked: string[] = [];
    for (const [node, commands] of byNode) {
      for (const [name, ...args] of commands) {
        if (name === 'get') {
          expect(args).toEqual([keys.key('user', 'u1')]);
          expect(node).toBe(nodeOf(args[0]));
          continue;
        }
        expect(name).toBe('mget');
        expect(new Set(args.map((k) => calculateSlot(k))).size).toBe(1);
        expect(nodeOf(args[0])).toBe(node);
        asked.push(...args);
      }
    }
    expect(asked.sort()).toEqual([...itemKeys].sort());
  });

  it('counts one round trip per distinct master involved, the user key’s node included', async () => {
    const userNode = nodeOf(keys.key('user', 'u1'));
    const onUserNode = itemIds.filter((id) => nodeOf(keys.key('item', id)) === userNode);
    const elsewhere = itemIds.filter((id) => nodeOf(keys.key('item', id)) !== userNode);
    const otherNode = nodeOf(keys.key('item', elsewhere[0]));
    const onOtherNode = elsewhere.filter((id) => nodeOf(keys.key('item', id)) === otherNode);

    const store = newStore();
    const same = await store.fetch('u1', onUserNode.slice(0, 50));
    expect(same.stats.roundTrips).toBe(1);
    const other = await store.fetch('u1', onOtherNode.slice(0, 50));
    expect(other.stats.roundTrips).toBe(2);
    expect(other.items).toEqual(onOtherNode.slice(0, 50).map((id) => itemRow(Number(id.slice(1)))));

    // Warm: only the user's GET, on its node.
    const stop = await recordMasters();
    const warm = await store.fetch('u1', onOtherNode.slice(0, 50));
    const byNode = await stop();
    expect(warm.stats).toEqual({ roundTrips: 1, cacheHits: 50, cacheMisses: 0 });
    for (const [node, commands] of byNode)
      expect(commands).toEqual(node === userNode ? [['get', keys.key('user', 'u1')]] : []);
  });

  it('writes rows and merges newer updates on the key’s own node (putRows, mergeIfNewer)', async () => {
    const ids = ['w1', 'w2', 'w3', 'w4', 'w5', 'w6'];
    expect(new Set(ids.map((id) => nodeOf(keys.key('item', id)))).size).toBeGreaterThan(1);
    await writer.putRows(
      ids.map((id) => ({ entity: 'item' as const, id, fields: { price: 1, brand: 'b1' } })),
      100,
    );

    expect(await writer.mergeIfNewer('item', 'w1', { price: 2 }, 200)).toBe(true);
    expect(await writer.mergeIfNewer('item', 'w2', { price: 3 }, 100)).toBe(false); // not newer
    expect(await writer.mergeIfNewer('item', 'w3', { price: 4 }, 50)).toBe(false); // older
    expect(await writer.mergeIfNewer('item', 'w4', { brand: 'b9', tags: 't1' }, 101)).toBe(true);
    expect(await writer.mergeIfNewer('item', 'new', { price: 7 }, 5)).toBe(true); // no row yet

    const fetched = await newStore().fetch('u1', [...ids, 'new']);
    expect(fetched.degraded).toBe(false);
    expect(fetched.items).toEqual([
      { price: 2, brand: 'b1' },
      { price: 1, brand: 'b1' },
      { price: 1, brand: 'b1' },
      { price: 1, brand: 'b9', tags: 't1' },
      { price: 1, brand: 'b1' },
      { price: 1, brand: 'b1' },
      { price: 7 },
    ]);
    const stored = JSON.parse((await cluster.get(keys.key('item', 'w1'))) as string);
    expect(stored._ts).toBe(200);
  });

  it('the cluster client of the store is a real Cluster connection on every master', () => {
    const ports = cluster
      .nodes('master')
      .map((n: Redis) => n.options.port)
      .sort();
    expect(ports).toEqual(PORTS);
  });

  it('with slot buckets, 3,000 keys take at most that many MGETs and every row comes back', async () => {
    const buckets = 64;
    const tagged = new RedisKeys(`${prefix}b:`, buckets);
    expect(tagged.key('item', 'i7')).toMatch(new RegExp(`^${prefix}b:item:\\{\\d+\\}:i7$`));
    const taggedWriter = new RedisFeatureWriter(cluster, tagged);
    await taggedWriter.putRows([
      ...itemIds.map((id, i) => ({ entity: 'item' as const, id, fields: itemRow(i) })),
      { entity: 'user', id: 'u1', fields: userRow },
    ]);
    const metrics = new FeaturesMetrics(new Registry());
    const cache = new ItemCache({ maxEntries: 100_000, maxBytes: 1 << 26, ttlMs: 60_000 });
    const store = new RedisFeatureStore(cluster, tagged, cache, 2000, metrics);

    const stop = await recordMasters();
    const fetched = await store.fetch('u1', itemIds);
    const byNode = await stop();

    expect(fetched.degraded).toBe(false);
    expect(fetched.user).toEqual(userRow);
    fetched.items.forEach((row, i) => expect(row).toEqual(itemRow(i)));
    const mgets = [...byNode.values()].flat().filter(([name]) => name === 'mget');
    expect(mgets.length).toBeLessThanOrEqual(buckets);
    expect(mgets.reduce((n, [, ...args]) => n + args.length, 0)).toBe(N);
  });

  it('item keys of another type on different masters: found by the background check, on their nodes', async () => {
    const odd = ['hash-a', 'hash-b', 'hash-c', 'hash-d', 'hash-e', 'hash-f'];
    for (const id of odd) await cluster.hset(keys.key('item', id), { price: '1' });
    expect(new Set(odd.map((id) => nodeOf(keys.key('item', id)))).size).toBeGreaterThan(1);
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const metrics = new FeaturesMetrics(new Registry());
    const cache = new ItemCache({ maxEntries: 1000, maxBytes: 1 << 20, ttlMs: 60_000 });
    const store = new RedisFeatureStore(cluster, keys, cache, 2000, metrics);

    const fetched = await store.fetch('u1', [...odd, 'unknown-item', 'i1']);
    expect(fetched.items).toEqual([...odd.map(() => undefined), undefined, itemRow(1)]);
    for (const until = Date.now() + 2000; store.typeCheck.busy && Date.now() < until;)
      await new Promise((resolve) => setTimeout(resolve, 5));
    const counted = (await metrics.badValues.get()).values.find(
      (v) => v.labels.source === 'redis' && v.labels.reason === 'wrong_type',
    );
    expect(counted?.value).toBe(odd.length);
    expect(warn.mock.calls.map(String).join('\n')).toContain(
      `${keys.key('item', 'hash-a')}: a hash key`,
    );
    warn.mockRestore();
  });
});
