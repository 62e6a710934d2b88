/**
 * The rollout loop as the scene registry is to run it, over the real Redis on 127.0.0.1:6379
 * with two replicas (each its own connection): traffic.yaml puts a canary on 10% of users; on
 * replica A the canary's error rate crosses its guardrail, the guard rolls it back and the
 * rollback is written as an override; replica B reloads (as a broadcast or its poll would make
 * it) and stops sending users to the canary; a restarted replica still serves without it, and
 * the override wins until it is cleared. Keys live under a prefix unique to this run.
 */
import { RolloutMetrics, TrafficConflictError, withoutCanary } from '@app/pipeline';
import {
  CanaryGuard,
  readTrafficYaml,
  RedisTrafficStore,
  resolveTraffic,
  TrafficPlan,
  TrafficResolution,
} from '@app/pipeline/testing';
import { Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { Registry } from 'prom-client';

const prefix = `itr:${randomUUID().slice(0, 8)}:`;
const scene = 'feed';
const VERSIONS = ['v1', 'v2'];
const TRAFFIC_YAML = `
stable: v1
canary:
  version: v2
  percent: 10
  guardrail: { window: 60, minRequests: 50, minErrors: 5, maxErrorRateDelta: 0.05 }
`;
const users = Array.from({ length: 2_000 }, (_, i) => `u${i}`);

describe('canary rollback across replicas (real Redis)', () => {
  const clients: Redis[] = [];
  const connect = async () => {
    const client = new Redis('redis://127.0.0.1:6379', {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
    });
    await client.connect();
    clients.push(client);
    return client;
  };

  beforeAll(() => jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined));
  afterAll(async () => {
    await clients[0]?.del(
      `${prefix}traffic:{${scene}}:override`,
      `${prefix}traffic:{${scene}}:revision`,
    );
    await Promise.all(clients.map((c) => c.quit()));
    jest.restoreAllMocks();
  });

  it('rolls the canary back on every replica and keeps it back until the override is cleared', async () => {
    const file = {
      path: 'models/feed/traffic.yaml',
      digest: 'd1',
      ...readTrafficYaml(TRAFFIC_YAML, VERSIONS),
    };
    expect(file.errors).toEqual([]);

    /** One replica: a store, the resolution in force, the plan built from it. */
    const replica = async () => {
      const store = new RedisTrafficStore(await connect(), { prefix });
      const r = {
        store,
        resolution: undefined as TrafficResolution | undefined,
        plan: undefined as TrafficPlan | undefined,
      };
      const rebuild = () => {
        r.resolution = resolveTraffic({
          versions: VERSIONS,
          newest: 'v2',
          file,
          override: store.current(scene),
          previous: r.resolution,
        });
        r.plan = new TrafficPlan(r.resolution.config);
      };
      store.onChange(rebuild);
      await store.reload(scene);
      return r;
    };
    const [a, b] = [await replica(), await replica()];
    const canaryUsers = (r: { plan?: TrafficPlan }) =>
      users.filter((u) => r.plan?.choose(u).arm === 'canary');
    expect(a.resolution?.source).toBe('file');
    expect(canaryUsers(a).length).toBeGreaterThan(100);
    expect(canaryUsers(b)).toEqual(canaryUsers(a));

    // Replica A's guard sees the canary fail 20% of requests against 1% on stable.
    const registry = new Registry();
    const rollbacks: Promise<unknown>[] = [];
    const config = a.resolution!.config;
    const guard = new CanaryGuard({
      scene,
      stableVersion: config.stable,
      canary: config.canary!,
      metrics: new RolloutMetrics(registry),
      onRollback: (decision) =>
        rollbacks.push(
          a.store.set(scene, withoutCanary(config), {
            versions: VERSIONS,
            by: 'guardrail',
            reason: decision.reason,
            expectedRevision: a.resolution!.revision,
            fileDigest: file.digest,
          }),
        ),
    });
    for (let i = 0; i < 200; i++) guard.record('stable', i % 100 !== 0, 10);
    for (let i = 0; i < 100; i++) guard.record('canary', i % 5 !== 0, 10);
    expect(guard.state).toBe('rolled_back');
    await Promise.all(rollbacks);

    expect(a.resolution).toMatchObject({
      source: 'override',
      revision: 1,
      config: { stable: 'v1' },
    });
    expect(canaryUsers(a)).toEqual([]);
    // B still serves the canary until the broadcast (or its poll) makes it reload.
    expect(canaryUsers(b).length).toBeGreaterThan(100);
    await b.store.reload(scene);
    expect(canaryUsers(b)).toEqual([]);
    expect(b.store.current(scene)?.override).toMatchObject({
      by: 'guardrail',
      reason: expect.stringMatching(/^error rate 20\.00% vs stable 1\.00%/),
    });
    expect(await registry.metrics()).toContain(
      'ranker_rollout_rollbacks_total{scene="feed",version="v2",limit="maxErrorRateDelta"} 1',
    );

    // A second replica deciding the same rollback from the old revision is told it is late.
    await expect(
      b.store.set(scene, withoutCanary(config), {
        versions: VERSIONS,
        by: 'guardrail',
        expectedRevision: 0,
      }),
    ).rejects.toThrow(TrafficConflictError);

    // A restarted replica serves without the canary, although traffic.yaml still names it.
    const restarted = await replica();
    expect(restarted.resolution).toMatchObject({
      source: 'override',
      fileChangedSinceOverride: false,
    });
    expect(canaryUsers(restarted)).toEqual([]);

    // Clearing the override puts traffic.yaml (and its canary) back in force everywhere.
    await a.store.clear(scene);
    await Promise.all([b.store.reload(scene), restarted.store.reload(scene)]);
    for (const r of [a, b, restarted]) {
      expect(r.resolution?.source).toBe('file');
      expect(canaryUsers(r).length).toBeGreaterThan(100);
    }
  });
});
