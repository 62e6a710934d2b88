/**
 * Three replicas of the ranker app on one BUNDLES_DIR, reload notices over the real Redis
 * (a channel of this run's own):
 * - A polls every 300 ms and broadcasts;
 * - B never polls (BUNDLES_POLL_INTERVAL_MS=0) and broadcasts: it can only move on a notice;
 * - C polls every 300 ms; its broadcast Redis is a port where nothing listens, so it misses
 *   every notice and follows by polling alone (and its boot was not held up by that Redis).
 * A version A's poll sees reaches B through A's notice; a reload asked of B reaches A.
 */
import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { writeVersion } from '../support/bundle-versions';
import { freePort } from '../support/free-port';
import { bundlesRoot } from './live-ranker';
import { RankerClient } from './ranker-client';
import { demoRankBody } from './steady-traffic';

const TOKEN = 'live-replicas-spec-token-0123456789';

describe('replicas follow one reload (three ranker apps, Redis pub/sub notices)', () => {
  const channel = `ranker-spec-${randomUUID()}:bundles`;
  let root: string;
  let removeRoot: () => Promise<void>;
  let redis: Redis;
  let a: RankerClient, b: RankerClient, c: RankerClient;

  const servedBy = async (replica: RankerClient) =>
    (await replica.rank('feed', demoRankBody(1, 5))).body.version;
  const until = async (replica: RankerClient, version: string, withinMs = 15_000) => {
    for (const end = Date.now() + withinMs; (await servedBy(replica)) !== version; await sleep(50))
      if (Date.now() > end) throw new Error(`${replica.baseUrl} did not serve ${version}`);
  };
  const received = (replica: RankerClient) =>
    replica.metric('ranker_bundle_notices_total{result="received"}');

  beforeAll(async () => {
    ({ root, remove: removeRoot } = await bundlesRoot('ranker-replicas-'));
    redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true });
    await redis.connect();
    const common = {
      BUNDLES_DIR: root,
      BUNDLES_BROADCAST_CHANNEL: channel,
      SCORING_DEFAULT_INSTANCES: '1',
      RANKER_ADMIN_TOKEN: TOKEN,
    };
    const live = { ...common, BUNDLES_BROADCAST_REDIS_URL: 'redis://127.0.0.1:6379' };
    a = await RankerClient.start({ ...live, BUNDLES_POLL_INTERVAL_MS: '300' });
    b = await RankerClient.start({ ...live, BUNDLES_POLL_INTERVAL_MS: '0' });
    const dead = `redis://127.0.0.1:${await freePort()}`;
    c = await RankerClient.start({
      ...common,
      BUNDLES_BROADCAST_REDIS_URL: dead,
      BUNDLES_POLL_INTERVAL_MS: '300',
    });
    // Both live replicas listen before anything is dropped.
    for (const end = Date.now() + 10_000; ; await sleep(20)) {
      const [, listeners] = (await redis.pubsub('NUMSUB', channel)) as [string, number];
      if (listeners >= 2) break;
      if (Date.now() > end) throw new Error(`only ${listeners} replica(s) subscribed`);
    }
  });

  afterAll(async () => {
    await Promise.all([a, b, c].map((replica) => replica?.close()));
    await redis?.quit();
    await removeRoot?.();
  });

  it('starts every replica on v1', async () => {
    expect(await Promise.all([a, b, c].map(servedBy))).toEqual(['v1', 'v1', 'v1']);
  });

  it("moves B, which never polls, to the version A's poll saw; C catches up by polling", async () => {
    await writeVersion(root, 'feed', 'v2');
    await until(a, 'v2');
    await until(b, 'v2');
    await until(c, 'v2');
    expect(await received(b)).toBeGreaterThanOrEqual(1);
    expect(await received(c)).toBe(0);
    expect(await c.metric('ranker_bundle_notices_total{result="send_failed"}')).toBeGreaterThan(0);
  });

  it('moves A to the version a reload asked of B found', async () => {
    const before = await received(a);
    await writeVersion(root, 'feed', 'v3');
    const reply = await b.admin('POST', '/scenes/feed/reload', TOKEN);
    expect(reply.status).toBe(200);
    expect(reply.body.stable).toBe('v3');
    await until(a, 'v3');
    await until(c, 'v3');
    for (const end = Date.now() + 5000; (await received(a)) === before; await sleep(50))
      if (Date.now() > end) throw new Error("B's notice never reached A");
  });
});
