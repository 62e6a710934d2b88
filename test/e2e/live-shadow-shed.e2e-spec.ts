/**
 * The shadow's bound over HTTP, on real worker threads: with SHADOW_MAX_IN_FLIGHT=1 and a shadow
 * version whose models wait SHADOW_RUN_MS for a batch to fill (batching with a long queue delay),
 * one shadow run holds the only slot while a burst of requests is answered. Every request of the
 * burst is answered exactly as without a shadow and long before a shadow run could finish; the
 * shadow runs that found the slot taken are shed and counted, so each request has exactly one
 * shadow outcome; once the slot is free a shadow runs again.
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { writeVersion } from '../support/bundle-versions';
import { startLiveRanker } from './live-ranker';
import { RankerClient } from './ranker-client';

const TOKEN = 'shadow-shed-spec-token-0123456789';
/** How long the shadow version's models wait for rows: the least a shadow run takes. */
const SHADOW_RUN_MS = 2_000;
const BURST = 24;

describe('shadow shedding over HTTP (SHADOW_MAX_IN_FLIGHT=1, a slow shadow)', () => {
  let ranker: RankerClient;
  let root: string;
  let close: () => Promise<void>;

  const body = (user: string) => ({
    user: { id: user },
    context: { hour: 7, device: 'ios' },
    candidates: Array.from({ length: 5 }, (_, i) => ({ id: `i${i * 13 + 2}` })),
  });
  const users = Array.from({ length: BURST }, (_, i) => `shed-user-${i}`);
  const scene = async () =>
    (
      await ranker.request('GET', '/v1/admin/scenes/feed', undefined, undefined, {
        authorization: `Bearer ${TOKEN}`,
      })
    ).body;
  const until = async (what: string, check: () => Promise<boolean>, withinMs = 60_000) => {
    for (const end = Date.now() + withinMs; !(await check()); await sleep(50))
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
  };
  const shadowMetric = (series: string) => ranker.metric(series);
  const comparisons = () =>
    shadowMetric('ranker_shadow_comparisons_total{scene="feed",version="v2",primary="v1"}');
  const failures = (reason: string) =>
    shadowMetric(`ranker_shadow_failures_total{scene="feed",version="v2",reason="${reason}"}`);
  const outcomes = async () => ({
    compared: await comparisons(),
    shed: await failures('shed'),
    other:
      (await failures('not_loaded')) + (await failures('timeout')) + (await failures('failed')),
  });

  beforeAll(async () => {
    ({ root, ranker, close } = await startLiveRanker('ranker-shadow-shed-', {
      SHADOW_MAX_IN_FLIGHT: '1',
      RANKER_ADMIN_TOKEN: TOKEN,
    }));
    // Pinned before v2 lands, so the newest version does not simply take over.
    await writeFile(join(root, 'feed', 'traffic.yaml'), 'stable: v1\n');
    await until(
      'traffic.yaml in force',
      async () => (await scene()).rollout?.traffic.source === 'file',
    );
    // v1's models, batched 8 rows at a time: a 5-candidate shadow run waits the whole delay.
    await writeVersion(root, 'feed', 'v2', {
      edit: (yaml, dir) => {
        for (const model of Object.values(yaml.models) as Record<string, unknown>[])
          model.batching = {
            enabled: true,
            maxBatchRows: 8,
            maxQueueDelayMicros: SHADOW_RUN_MS * 1000,
          };
        // Golden requests would each wait the delay too; the scores are v1's anyway.
        return rm(join(dir, 'golden.jsonl'));
      },
    });
  }, 120_000);
  afterAll(() => close?.());

  it('answers every request as without a shadow, at once, shedding the shadow runs that find the slot taken', async () => {
    const alone = new Map<string, unknown>();
    for (const user of users) {
      const reply = await ranker.rank('feed', body(user));
      expect(reply.status).toBe(200);
      alone.set(user, reply.body);
    }

    await writeFile(
      join(root, 'feed', 'traffic.yaml'),
      'stable: v1\nshadow: { version: v2, percent: 100 }\n',
    );
    await until('the shadow in force, v2 loaded', async () => {
      const listing = await scene();
      return (
        listing.rollout?.traffic.config.shadow?.version === 'v2' &&
        listing.versions.some(
          (v: { version: string; state: string }) => v.version === 'v2' && v.state === 'ready',
        )
      );
    });
    expect(await outcomes()).toEqual({ compared: 0, shed: 0, other: 0 });

    const started = performance.now();
    const burst = await Promise.all(
      users.map(async (user) => {
        const sent = performance.now();
        const reply = await ranker.rank('feed', body(user));
        return { user, reply, ms: performance.now() - sent };
      }),
    );
    const burstMs = performance.now() - started;

    for (const { user, reply, ms } of burst) {
      expect(reply.status).toBe(200);
      // Same version, arm, items and scores as before the shadow existed.
      expect(reply.body).toEqual(alone.get(user));
      // Answered before any shadow run could have finished: nobody waits for one.
      expect(ms).toBeLessThan(SHADOW_RUN_MS);
    }
    // Each request had exactly one shadow outcome: a comparison, or shed.
    await until('every shadow run of the burst accounted for', async () => {
      const { compared, shed, other } = await outcomes();
      return compared + shed + other === BURST;
    });
    const { compared, shed, other } = await outcomes();
    expect(other).toBe(0);
    // One slot, each run holding it SHADOW_RUN_MS at least: at most one run started per
    // SHADOW_RUN_MS of the burst (plus the first); every other request's shadow was shed.
    expect(compared).toBeGreaterThanOrEqual(1);
    expect(compared).toBeLessThanOrEqual(1 + Math.floor(burstMs / SHADOW_RUN_MS));
    expect(shed).toBe(BURST - compared);
    const { rollout } = await scene();
    expect(rollout.shadows).toEqual([
      expect.objectContaining({
        version: 'v2',
        primary: 'v1',
        comparisons: compared,
        failures: { shed },
      }),
    ]);

    // The slot frees once the run ends: the next request's shadow runs again.
    const reply = await ranker.rank('feed', body('after-the-burst'));
    expect(reply.status).toBe(200);
    await until('a shadow run after the burst', async () => (await comparisons()) === compared + 1);
    expect(await failures('shed')).toBe(shed);
  }, 120_000);
});
