/**
 * RollbackWriter's retry loop over real TrafficStores: the in-memory one (with a subclass whose
 * writes fail while it is "down") and RedisTrafficStore pointed at a port nothing listens on.
 * The target is a replica's view of the scene as SceneTrafficControl keeps it: read again only
 * when refreshed, so another writer's change shows up as a 409 first.
 */
import { Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { Registry } from 'prom-client';
import { freePort } from '../../../../test/support/free-port';
import { metricSum } from '../../../../test/support/metrics-text';
import { CanaryGuard, RollbackDecision } from '../rollout/canary-guard';
import { InMemoryTrafficStore } from '../rollout/in-memory-traffic-store';
import { RedisTrafficStore } from '../rollout/redis-traffic-store';
import { RolloutMetrics } from '../rollout/rollout.metrics';
import { TrafficConfig, withoutCanary } from '../rollout/traffic-config';
import { TrafficStoreUnavailableError } from '../rollout/traffic-errors';
import { readTrafficYaml, TrafficFile } from '../rollout/traffic-file';
import { resolveTraffic, TrafficResolution } from '../rollout/traffic-resolution';
import { TrafficStore } from '../rollout/traffic-store';
import { RollbackTarget, RollbackWriter, RollbackWriterOptions } from './rollback-writer';

const SCENE = 'feed';
const VERSIONS = ['v1', 'v2', 'v3'];
const FILE: TrafficFile = {
  path: 'models/feed/traffic.yaml',
  digest: 'digest-1',
  ...readTrafficYaml(
    'stable: v1\ncanary: { version: v2, percent: 10 }\nshadow: { version: v3, percent: 50 }\n',
    VERSIONS,
  ),
};

/** The in-memory store, with writes that fail as Redis's do while `down` is above 0. */
class FlakyStore extends InMemoryTrafficStore {
  down = 0;
  /** performance.now() of every write that reached the store. */
  readonly tries: number[] = [];

  protected override async change(scene: string, json: string, expected?: number) {
    this.tries.push(performance.now());
    if (this.down > 0) {
      this.down--;
      throw new TrafficStoreUnavailableError(
        'traffic overrides unavailable: redis: connect ECONNREFUSED',
      );
    }
    return super.change(scene, json, expected);
  }
}

/** One replica's rollout of the scene: what SceneTrafficControl hands the writer. */
class Replica implements RollbackTarget {
  resolution: TrafficResolution;
  /** The versions the scene has now (a write is validated against them). */
  versions = VERSIONS;

  constructor(readonly store: TrafficStore) {
    this.resolution = this.resolve();
  }

  inForce() {
    return this.resolution;
  }

  async write(
    config: TrafficConfig,
    change: { by: string; reason: string; expectedRevision: number },
  ) {
    await this.store.set(SCENE, config, {
      versions: this.versions,
      fileDigest: FILE.digest,
      ...change,
    });
    await this.refresh();
  }

  async refresh() {
    await this.store.reload(SCENE);
    this.resolution = this.resolve();
  }

  private resolve() {
    return resolveTraffic({
      versions: VERSIONS,
      newest: 'v3',
      file: FILE,
      override: this.store.current(SCENE),
      previous: this.resolution,
    });
  }
}

/** An admin, through another replica, changes the shadow's share; a Replica has not read it yet. */
const changeTheShadow = (store: TrafficStore) =>
  store.set(
    SCENE,
    { ...FILE.config, shadow: { version: 'v3', percent: 20 } },
    { versions: VERSIONS, by: 'ana' },
  );

/** The decision a real guard takes over a canary failing 20% of requests against stable's 1%. */
function rollbackOf(replica: Replica): RollbackDecision {
  let decision: RollbackDecision | undefined;
  const { config } = replica.resolution;
  const guard = new CanaryGuard({
    scene: SCENE,
    stableVersion: config.stable,
    canary: config.canary!,
    onRollback: (d) => (decision = d),
  });
  for (let i = 0; i < 200; i++) guard.record('stable', i % 100 !== 0, 10);
  for (let i = 0; i < 100; i++) guard.record('canary', i % 5 !== 0, 10);
  return decision!;
}

describe('RollbackWriter', () => {
  let registry: Registry;
  let writer: RollbackWriter;
  let warn: jest.SpyInstance;
  let error: jest.SpyInstance;

  const setup = (options?: RollbackWriterOptions) => {
    registry = new Registry();
    writer = new RollbackWriter(new RolloutMetrics(registry), options);
  };
  const writes = async (result: string) =>
    metricSum(
      await registry.metrics(),
      'ranker_rollout_rollback_writes_total',
      `scene="feed",result="${result}"`,
    );
  const counted = async () => ({
    written: await writes('written'),
    conflict: await writes('conflict'),
    failed: await writes('failed'),
    refused: await writes('refused'),
  });

  beforeEach(() => {
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    error = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  });
  afterEach(() => {
    writer?.close();
    jest.restoreAllMocks();
  });

  it('stores the config in force without its canary as a guardrail override', async () => {
    setup();
    const a = new Replica(new FlakyStore());
    const decision = rollbackOf(a);
    expect(decision.reason).toMatch(/^error rate 20\.00% vs stable 1\.00%/);

    await writer.write(decision, a);

    expect(a.store.current(SCENE)?.override).toMatchObject({
      revision: 1,
      by: 'guardrail',
      reason: `canary v2 rolled back: ${decision.reason}`,
      config: { stable: 'v1', shadow: { version: 'v3', percent: 50 } },
      fileDigest: FILE.digest,
    });
    expect(a.resolution).toMatchObject({ source: 'override', revision: 1 });
    expect(a.resolution.config.canary).toBeUndefined();
    expect(await counted()).toEqual({ written: 1, conflict: 0, failed: 0, refused: 0 });
  });

  it('retries a store that is down after growing backoffs, then writes; every try counted', async () => {
    setup();
    const store = new FlakyStore();
    store.down = 3;
    const a = new Replica(store);

    await writer.write(rollbackOf(a), a);

    expect(store.current(SCENE)?.override).toMatchObject({ revision: 1, by: 'guardrail' });
    expect(await counted()).toEqual({ written: 1, conflict: 0, failed: 3, refused: 0 });
    // The shared backoff: 100, 200 and 400 ms between the four tries.
    const gaps = store.tries.slice(1).map((t, i) => t - store.tries[i]);
    expect(gaps).toHaveLength(3);
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(100 * 2 ** i - 5));
    const retries = warn.mock.calls.filter(([m]) => /rollback of canary v2 not stored yet/.test(m));
    expect(retries).toHaveLength(3);
    expect(retries[0][0]).toMatch(
      /^scene feed: rollback of canary v2 not stored yet \(traffic overrides unavailable: .*\); retrying$/,
    );
  });

  it('on a 409 (another change came first) reads the scene again and writes at once on the new revision, keeping that change', async () => {
    const backoffs: number[] = [];
    setup({ backoffMs: (attempt) => (backoffs.push(attempt), 100) });
    const store = new FlakyStore();
    const a = new Replica(store);
    const decision = rollbackOf(a);
    await changeTheShadow(store);
    expect(a.resolution.revision).toBe(0);

    await writer.write(decision, a);

    expect(await counted()).toEqual({ written: 1, conflict: 1, failed: 0, refused: 0 });
    expect(backoffs).toEqual([]);
    expect(store.current(SCENE)?.override).toMatchObject({
      revision: 2,
      by: 'guardrail',
      config: { stable: 'v1', shadow: { version: 'v3', percent: 20 } },
    });
    expect(store.current(SCENE)?.override?.config).not.toHaveProperty('canary');
  });

  it('ends without writing when the change that came first already removed the canary', async () => {
    setup();
    const store = new FlakyStore();
    const a = new Replica(store);
    const decision = rollbackOf(a);
    await store.set(SCENE, withoutCanary(FILE.config!), {
      versions: VERSIONS,
      by: 'ana',
      reason: 'by hand',
    });

    await writer.write(decision, a);

    expect(await counted()).toEqual({ written: 0, conflict: 1, failed: 0, refused: 0 });
    expect(store.current(SCENE)?.override).toMatchObject({ revision: 1, by: 'ana' });
    expect(store.tries).toHaveLength(2);
  });

  it('ends at once when closed while backing off, and no try starts after the close', async () => {
    setup({ backoffMs: () => 60_000 });
    const store = new FlakyStore();
    store.down = 1;
    const a = new Replica(store);
    const writing = writer.write(rollbackOf(a), a);
    for (const end = Date.now() + 5_000; store.tries.length === 0;)
      if (Date.now() > end) throw new Error('no first try');
      else await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 20)); // asleep in its 60 s backoff

    const closedAt = performance.now();
    writer.close();
    await writing;

    expect(performance.now() - closedAt).toBeLessThan(100);
    // The store is up again, but nothing was written after the close.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(store.tries).toHaveLength(1);
    expect(await store.read(SCENE)).toEqual({ revision: 0 });
    expect(await counted()).toEqual({ written: 0, conflict: 0, failed: 1, refused: 0 });
    expect(warn).toHaveBeenCalledWith(
      'scene feed: shutting down before the rollback of canary v2 was stored; after a restart this replica serves the canary again until a guard rolls it back',
    );
    expect(error).not.toHaveBeenCalled();
  });

  it('does not retry a refusal that would come again (the shadow version is gone): counted as refused', async () => {
    const backoffs: number[] = [];
    setup({ backoffMs: (attempt) => (backoffs.push(attempt), 100) });
    const store = new FlakyStore();
    const a = new Replica(store);
    a.versions = ['v1', 'v2']; // v3's folder was removed after the traffic was read

    await writer.write(rollbackOf(a), a);

    expect(await counted()).toEqual({ written: 0, conflict: 0, failed: 0, refused: 1 });
    expect(backoffs).toEqual([]);
    expect(store.tries).toEqual([]); // refused by validation, before the store
    expect(error).toHaveBeenCalledWith(
      expect.stringMatching(
        /^scene feed: rollback of canary v2 refused by the traffic store \(traffic config .*shadow\.version: 'v3' is not a version of this scene.*\); not retried/,
      ),
    );
  });

  it('backs off and tries again when reading the scene after a conflict fails, and never rejects', async () => {
    const backoffs: number[] = [];
    setup({ backoffMs: (attempt) => (backoffs.push(attempt), 1) });
    const store = new FlakyStore();
    const a = new Replica(store);
    const decision = rollbackOf(a);
    await changeTheShadow(store);
    const refresh = a.refresh.bind(a);
    let refreshes = 0;
    a.refresh = async () => {
      if (++refreshes === 1) throw new Error('EIO: traffic.yaml unreadable');
      return refresh();
    };

    await expect(writer.write(decision, a)).resolves.toBeUndefined();

    // Try 1: 409, its refresh fails, a backoff; try 2: 409 again (still stale), refreshed; try 3.
    expect(backoffs).toEqual([0]);
    expect(await counted()).toEqual({ written: 1, conflict: 2, failed: 0, refused: 0 });
    expect(warn).toHaveBeenCalledWith(
      'scene feed: traffic not read again: EIO: traffic.yaml unreadable',
    );
    expect(store.current(SCENE)?.override).toMatchObject({ revision: 2, by: 'guardrail' });
  });

  it('gives up after its attempts against a RedisTrafficStore nothing answers, each try counted as failed', async () => {
    setup({ attempts: 3, backoffMs: () => 1 });
    // Options as the app's traffic Redis has them (traffic-store.providers.ts).
    const down = new Redis(await freePort(), '127.0.0.1', {
      connectTimeout: 2000,
      maxRetriesPerRequest: 1,
      retryStrategy: (attempt: number) => Math.min(100 * attempt, 2000),
      // disconnect() otherwise arms a 2 s timer to destroy a stream that is already closed.
      disconnectTimeout: 10,
    });
    down.on('error', () => undefined);
    try {
      const a = new Replica(new RedisTrafficStore(down, { prefix: 'rollback-writer-spec:' }));
      await writer.write(rollbackOf(a), a);
      expect(await counted()).toEqual({ written: 0, conflict: 0, failed: 3, refused: 0 });
      expect(a.resolution.config.canary?.version).toBe('v2');
      expect(warn).toHaveBeenCalledWith(
        expect.stringMatching(/not stored yet \(traffic overrides unavailable: redis: /),
      );
      expect(error).toHaveBeenCalledWith(
        'scene feed: rollback of canary v2 could not be stored; this replica keeps it off, others follow their own guards',
      );
    } finally {
      down.disconnect();
    }
  });
});
