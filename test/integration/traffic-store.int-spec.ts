/**
 * Traffic overrides against the real Redis on 127.0.0.1:6379 and the real Redis Cluster on
 * 7000-7002: validated like traffic.yaml, kept as JSON with revision/who/when, shared between
 * replicas (each its own connection) and across restarts, guarded by expected revisions. The
 * in-memory adapter runs the same contract. Keys live under a prefix unique to this run and are
 * deleted after.
 */
import {
  TrafficConflictError,
  TrafficInvalidError,
  TrafficOverrideState,
  TrafficStore,
  TrafficStoreUnavailableError,
} from '@app/pipeline';
import { InMemoryTrafficStore, RedisTrafficStore } from '@app/pipeline/testing';
import { Logger } from '@nestjs/common';
import Redis, { Cluster } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { freePort } from '../support/free-port';

const prefix = `itt:${randomUUID().slice(0, 8)}:`;
const VERSIONS = ['v1', 'v2', 'v3'];
const AT = new Date('2026-06-01T12:00:00.000Z');
const now = () => AT;
const canary = { stable: 'v1', canary: { version: 'v2', percent: 5 } };
let sceneCount = 0;
/** A scene of its own per test, so tests never see each other's revisions. */
const freshScene = () => `feed-${++sceneCount}`;

interface Adapter {
  name: string;
  /** Two replicas sharing one store (one process for the in-memory adapter). */
  replicas(): Promise<[TrafficStore, TrafficStore]>;
}

const opened: (Redis | Cluster)[] = [];
const redisClient = async () => {
  const client = new Redis('redis://127.0.0.1:6379', {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
  });
  await client.connect();
  opened.push(client);
  return client;
};
const clusterClient = async () => {
  const client = new Redis.Cluster(
    [7000, 7001, 7002].map((port) => ({ host: '127.0.0.1', port })),
    { lazyConnect: true, redisOptions: { maxRetriesPerRequest: 1 } },
  );
  await client.connect();
  opened.push(client);
  return client;
};
const usedScenes: string[] = [];

const ADAPTERS: Adapter[] = [
  {
    name: 'RedisTrafficStore (standalone)',
    replicas: async () => [
      new RedisTrafficStore(await redisClient(), { prefix, now }),
      new RedisTrafficStore(await redisClient(), { prefix, now }),
    ],
  },
  {
    name: 'RedisTrafficStore (Cluster)',
    replicas: async () => [
      new RedisTrafficStore(await clusterClient(), { prefix, now }),
      new RedisTrafficStore(await clusterClient(), { prefix, now }),
    ],
  },
  {
    name: 'InMemoryTrafficStore',
    replicas: async () => {
      const store = new InMemoryTrafficStore(now);
      return [store, store];
    },
  },
];

afterAll(async () => {
  const redis = await redisClient();
  const cluster = await clusterClient();
  for (const scene of usedScenes) {
    const keys = ['override', 'revision'].map((k) => `${prefix}traffic:{${scene}}:${k}`);
    await redis.del(...keys);
    await cluster.del(...keys);
  }
  await Promise.all(opened.map((client) => client.quit()));
});

describe.each(ADAPTERS)('$name', (adapter) => {
  let a: TrafficStore;
  let b: TrafficStore;
  let scene: string;
  beforeAll(async () => {
    [a, b] = await adapter.replicas();
  });
  beforeEach(() => {
    scene = freshScene();
    usedScenes.push(scene);
  });

  it('reads revision 0 and no override for a scene never changed', async () => {
    expect(await a.read(scene)).toEqual({ revision: 0 });
  });

  it('writes a valid override with revision, who and when; the other replica reads it', async () => {
    const written = await a.set(scene, canary, {
      versions: VERSIONS,
      by: 'ana',
      reason: 'ramp v2',
      fileDigest: 'abc',
    });
    expect(written).toEqual({
      scene,
      revision: 1,
      config: expect.objectContaining({
        stable: 'v1',
        canary: expect.objectContaining({ percent: 5 }),
      }),
      by: 'ana',
      at: AT.toISOString(),
      reason: 'ramp v2',
      fileDigest: 'abc',
    });
    expect(await b.read(scene)).toEqual({ revision: 1, override: written });
  });

  it('refuses an invalid override with every path, and writes nothing', async () => {
    const bad = { stable: 'v9', canary: { version: 'v2', percent: 120 }, extra: true };
    const error = await a.set(scene, bad, { versions: VERSIONS, by: 'ana' }).catch((e) => e);
    expect(error).toBeInstanceOf(TrafficInvalidError);
    expect(error).toMatchObject({ status: 422, code: 'TRAFFIC_INVALID' });
    expect((error as TrafficInvalidError).details.map((d) => d.path)).toEqual([
      'extra',
      'stable',
      'canary.percent',
    ]);
    expect(await b.read(scene)).toEqual({ revision: 0 });
    await expect(a.set(scene, canary, { versions: VERSIONS, by: '' })).rejects.toThrow(/'by'|by:/);
    await expect(a.set('no}such{scene', canary, { versions: VERSIONS, by: 'x' })).rejects.toThrow(
      TrafficInvalidError,
    );
  });

  it('advances the revision on every set and clear; a clear brings back no override', async () => {
    await a.set(scene, { stable: 'v1' }, { versions: VERSIONS, by: 'ana' });
    await a.set(scene, { stable: 'v2' }, { versions: VERSIONS, by: 'ana' });
    expect(await a.clear(scene)).toBe(3);
    expect(await b.read(scene)).toEqual({ revision: 3 });
    const again = await b.set(scene, { stable: 'v3' }, { versions: VERSIONS, by: 'bo' });
    expect(again.revision).toBe(4);
  });

  it('refuses a change based on a stale revision, changing nothing; exactly one racer wins', async () => {
    await a.set(scene, { stable: 'v1' }, { versions: VERSIONS, by: 'ana' });
    const stale = await b
      .set(scene, { stable: 'v2' }, { versions: VERSIONS, by: 'bo', expectedRevision: 0 })
      .catch((e) => e);
    expect(stale).toBeInstanceOf(TrafficConflictError);
    expect(stale).toMatchObject({ status: 409, currentRevision: 1, expectedRevision: 0 });
    await expect(b.clear(scene, { expectedRevision: 7 })).rejects.toThrow(TrafficConflictError);
    expect((await a.read(scene)).override?.config).toEqual({ stable: 'v1', experiments: [] });

    // Two replicas both roll back from revision 1: one write lands, the other is told.
    const results = await Promise.allSettled(
      [a, b].map((store, i) =>
        store.set(
          scene,
          { stable: `v${i + 2}` },
          { versions: VERSIONS, by: 'guardrail', expectedRevision: 1 },
        ),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const [lost] = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
    expect(lost.reason).toBeInstanceOf(TrafficConflictError);
    expect((await a.read(scene)).revision).toBe(2);
  });

  it('tells its own listeners at once, once per change', async () => {
    const seen: [string, TrafficOverrideState][] = [];
    const off = a.onChange((s, state) => s === scene && seen.push([s, state]));
    try {
      const written = await a.set(scene, canary, { versions: VERSIONS, by: 'ana' });
      await a.clear(scene);
      expect(seen).toEqual([
        [scene, { revision: 1, override: written }],
        [scene, { revision: 2 }],
      ]);
      expect(a.current(scene)).toEqual({ revision: 2 });
    } finally {
      off();
    }
  });

  it('keeps a listener that throws from stopping the change or the other listeners', async () => {
    const told: number[] = [];
    const offBad = a.onChange(() => {
      throw new Error('listener bug');
    });
    const offGood = a.onChange((s, state) => s === scene && told.push(state.revision));
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      await a.set(scene, { stable: 'v1' }, { versions: VERSIONS, by: 'ana' });
      expect(told).toEqual([1]);
      expect(logged).toHaveBeenCalledWith(
        expect.stringMatching(
          new RegExp(`^traffic listener failed for scene ${scene}: Error: listener bug`),
        ),
      );
    } finally {
      logged.mockRestore();
      offBad();
      offGood();
    }
  });
});

describe.each(ADAPTERS.filter((adapter) => adapter.name.startsWith('Redis')))(
  '$name between replicas',
  (adapter) => {
    it('tells another replica of each change when it reloads, once per change', async () => {
      const [a, b] = await adapter.replicas();
      const scene = freshScene();
      usedScenes.push(scene);
      const seen: number[] = [];
      const off = b.onChange((s, state) => s === scene && seen.push(state.revision));
      try {
        await b.reload(scene); // first look: revision 0
        const written = await a.set(scene, canary, { versions: VERSIONS, by: 'ana' });
        expect(seen).toEqual([0]); // b has not looked yet
        await b.reload(scene);
        expect(b.current(scene)).toEqual({ revision: 1, override: written });
        await b.reload(scene); // nothing new: nothing told
        await a.clear(scene);
        await b.reload(scene);
        expect(seen).toEqual([0, 1, 2]);
      } finally {
        off();
      }
    });
  },
);

describe('RedisTrafficStore', () => {
  it('survives a restart: a new store on a new connection reads the override', async () => {
    const scene = freshScene();
    usedScenes.push(scene);
    const before = new RedisTrafficStore(await redisClient(), { prefix, now });
    const written = await before.set(scene, canary, { versions: VERSIONS, by: 'ana' });
    const after = new RedisTrafficStore(await redisClient(), { prefix });
    expect(await after.read(scene)).toEqual({ revision: 1, override: written });
  });

  it('stores JSON that anything can read: revision first, then the record', async () => {
    const scene = freshScene();
    usedScenes.push(scene);
    const redis = await redisClient();
    await new RedisTrafficStore(redis, { prefix, now }).set(scene, canary, {
      versions: VERSIONS,
      by: 'ana',
    });
    const text = (await redis.get(`${prefix}traffic:{${scene}}:override`)) as string;
    expect(text.startsWith('{"revision":1,"scene":')).toBe(true);
    expect(JSON.parse(text)).toMatchObject({
      revision: 1,
      scene,
      by: 'ana',
      config: { stable: 'v1' },
    });
  });

  it.each([
    ['not JSON', '{oops', 'is not JSON'],
    ['not an object', '[1]', 'is not a JSON object'],
    ['missing fields', '{"revision":1,"scene":"S"}', 'lacks revision, by, at or config'],
    [
      'another scene',
      '{"revision":1,"scene":"news","by":"x","at":"t","config":{}}',
      'belongs to scene "news"',
    ],
  ])('reports a hand-written override that is %s', async (_, text, message) => {
    const scene = freshScene();
    usedScenes.push(scene);
    const redis = await redisClient();
    await redis.set(
      `${prefix}traffic:{${scene}}:override`,
      text.replace('"S"', JSON.stringify(scene)),
    );
    expect(await new RedisTrafficStore(redis, { prefix }).read(scene)).toEqual({
      revision: 0,
      errors: [{ path: 'override', message }],
    });
  });

  it('fails with TrafficStoreUnavailableError (503) while Redis is unreachable', async () => {
    const port = await freePort();
    const down = new Redis(port, '127.0.0.1', {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    down.on('error', () => undefined);
    const store = new RedisTrafficStore(down, { prefix });
    try {
      const error = await store.read('feed').catch((e) => e);
      expect(error).toBeInstanceOf(TrafficStoreUnavailableError);
      expect(error).toMatchObject({ status: 503, code: 'TRAFFIC_STORE_UNAVAILABLE' });
      await expect(store.set('feed', canary, { versions: VERSIONS, by: 'ana' })).rejects.toThrow(
        TrafficStoreUnavailableError,
      );
    } finally {
      down.disconnect();
    }
  });
});
