/**
 * The ranker app on a Redis of its own (a redis-server this spec starts on a free loopback port),
 * which is killed mid-test and started again: rank calls keep answering 200, flagged degraded,
 * with cached items still served and uncached ones on their declared defaults; the degraded calls
 * are counted; once Redis is back the app recovers by itself, without a restart.
 */
import { Logger } from '@nestjs/common';
import { readFeatureFile, RedisFeatureWriter, RedisKeys } from '@app/features/testing';
import Redis from 'ioredis';
import { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse } from 'yaml';
import { RankerClient } from './ranker-client';
import { freePort } from '../support/free-port';
import { startRedis, stopRedis } from '../support/redis-server';

const repoRoot = resolve(__dirname, '..', '..');
const FEATURES = join(repoRoot, 'models/demo/features.jsonl');

/** A throwaway redis-server (no persistence) on `port`; resolves once it answers PING. */
/** Seeds the app's key layout (default prefix rk:) from the demo feature file. */
async function seed(port: number): Promise<number> {
  const client = new Redis(port, '127.0.0.1', { enableAutoPipelining: true });
  try {
    const writer = new RedisFeatureWriter(client, new RedisKeys('rk:'));
    return await writer.putRows(await readFeatureFile(FEATURES));
  } finally {
    await client.quit();
  }
}

/** Declared defaults of the feed bundle's item features (what a missing feature becomes). */
function itemDefaults(): Record<string, string | number> {
  const spec = parse(readFileSync(join(repoRoot, 'models/feed/v1/pipeline.yaml'), 'utf8'));
  const features = spec.features.item as Record<string, { default: string | number }>;
  return Object.fromEntries(Object.entries(features).map(([name, f]) => [name, f.default]));
}

type Scores = Record<string, number>;
const scoresOf = (items: { id: string; score: number }[]): Scores =>
  Object.fromEntries(items.map((i) => [i.id, i.score]));
const ids = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, k) => `i${from + k}`);

describe('ranker with Redis stopped mid-test and restarted (own redis-server)', () => {
  let dir: string;
  let port: number;
  let redis: ChildProcess | undefined;
  let ranker: RankerClient | undefined;

  // The user's features travel in the request, so the (uncached) user row does not matter and
  // any change in scores comes from the item rows alone.
  const user = {
    id: 'u1',
    features: {
      age: 25,
      gender: 'f',
      city: 'c21',
      level: 4,
      active_days_30d: 29,
      fav_category: 'cat0',
    },
  };
  const cached = ids(1, 100); // fetched while Redis is up
  const uncached = ids(201, 300); // first asked for while Redis is down
  const rank = (candidateIds: string[], features?: Record<string, string | number>) =>
    ranker!.rank('feed', {
      user,
      context: { hour: 20, device: 'ios' },
      candidates: candidateIds.map((id) => (features ? { id, features } : { id })),
      topK: candidateIds.length,
    });
  const degradedTotal = async () => {
    const text = await (await fetch(`${ranker!.baseUrl}/metrics`)).text();
    return text
      .split('\n')
      .filter((line) => line.startsWith('ranker_features_degraded_total{'))
      .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
  };

  beforeAll(async () => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    dir = mkdtempSync(join(tmpdir(), 'ranker-redis-outage-'));
    port = await freePort();
    redis = await startRedis(port, dir);
    expect(await seed(port)).toBe(5200);
    ranker = await RankerClient.start({
      FEATURE_STORE: 'redis',
      REDIS_URL: `redis://127.0.0.1:${port}`,
      FEATURES_FETCH_TIMEOUT_MS: '50',
      ITEM_CACHE_TTL_MS: '600000',
    });
  }, 60_000);

  afterAll(async () => {
    await ranker?.close();
    await stopRedis(redis);
    if (dir) rmSync(dir, { recursive: true, force: true });
    jest.restoreAllMocks();
  });

  it('serves degraded answers while Redis is down and recovers by itself when it returns', async () => {
    // Redis up: stored features, not degraded.
    const before = await rank(cached);
    expect(before.status).toBe(200);
    expect(before.body.degraded).toBe(false);
    const cachedScores = scoresOf(before.body.items);
    expect(await degradedTotal()).toBe(0);

    // Redis killed.
    await stopRedis(redis);
    redis = undefined;
    let degradedCalls = 0;

    const started = performance.now();
    const served = await rank(cached);
    degradedCalls++;
    expect(served.status).toBe(200);
    expect(served.body.degraded).toBe(true);
    expect(scoresOf(served.body.items)).toEqual(cachedScores); // from the item cache

    const down = await rank(uncached);
    degradedCalls++;
    expect(down.status).toBe(200);
    expect(down.body.degraded).toBe(true);
    // Every item on its declared defaults: the same scores as with the defaults sent explicitly.
    const explicitDefaults = await rank(uncached, itemDefaults());
    degradedCalls++;
    const defaultsScores = scoresOf(explicitDefaults.body.items);
    expect(scoresOf(down.body.items)).toEqual(defaultsScores);
    expect(performance.now() - started).toBeLessThan(5000);

    // Many callers at once: none fails.
    const burst = await Promise.all(Array.from({ length: 16 }, () => rank(ids(401, 450))));
    degradedCalls += burst.length;
    for (const reply of burst) {
      expect(reply.status).toBe(200);
      expect(reply.body.degraded).toBe(true);
      expect(reply.body.items).toHaveLength(50);
    }
    expect(await degradedTotal()).toBe(degradedCalls);

    // Redis back on the same port (empty, so seeded again before any rank call reads it).
    redis = await startRedis(port, dir);
    await seed(port);
    const restarted = performance.now();
    let reply = await rank(uncached);
    while (reply.body.degraded && performance.now() - restarted < 10_000) {
      await sleep(100);
      reply = await rank(uncached);
    }
    expect(reply.status).toBe(200);
    expect(reply.body.degraded).toBe(false);
    const recovered = scoresOf(reply.body.items);
    const changed = uncached.filter((id) => recovered[id] !== defaultsScores[id]);
    expect(changed.length).toBeGreaterThan(90); // stored features again, not defaults
    expect((await rank(cached)).body).toMatchObject({ degraded: false });
    expect(scoresOf((await rank(cached)).body.items)).toEqual(cachedScores);
  });
});
