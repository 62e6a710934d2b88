import type {
  SceneListing,
  SceneRegistry,
  SceneTraffic,
  SceneTrafficControl,
  VersionListing,
} from '@app/pipeline';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkOf, RegistryAdminPageSource } from './registry-admin-page.source';

describe('RegistryAdminPageSource', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  /** A bundle folder, with or without golden.jsonl. */
  function folder(golden: boolean): string {
    const dir = mkdtempSync(join(tmpdir(), 'admin-source-'));
    dirs.push(dir);
    if (golden) writeFileSync(join(dir, 'golden.jsonl'), '');
    return dir;
  }
  const version = (v: Partial<VersionListing> & Pick<VersionListing, 'version' | 'state'>) => ({
    reasons: [],
    inFlight: 0,
    dir: folder(true),
    ...v,
  });

  /** The two sources `GET /v1/admin/scenes` reads, as plain data. */
  function source(listings: SceneListing[], rollouts: SceneTraffic[] = []) {
    const registry = { list: () => listings } as unknown as SceneRegistry;
    const traffic = {
      describe: (scene: string) => rollouts.find((r) => r.scene === scene),
    } as unknown as SceneTrafficControl;
    return new RegistryAdminPageSource(registry, traffic);
  }

  const pending = (why: string) =>
    ['schema', 'model contract', 'dry run', 'golden'].map((check) => ({
      check,
      outcome: 'pending',
      messages: [why],
    }));

  it('lists every version with its state, reasons and gate, scenes sorted', async () => {
    const before = Date.now();
    const view = await source([
      { scene: 'news', stable: null, versions: [] },
      {
        scene: 'feed',
        stable: 'v1',
        versions: [
          version({ version: 'v7', state: 'incomplete', reasons: [{ message: 'no READY file' }] }),
          version({
            version: 'v6',
            state: 'failed',
            reasons: [
              { path: 'models.ctr.inputs.dense.columns', message: 'expects 13, model has 12' },
              { path: 'golden.jsonl:3', message: 'off' },
            ],
          }),
          version({ version: 'v5', state: 'loading' }),
          version({ version: 'v4', state: 'warming', dir: folder(false) }),
          version({ version: 'v3', state: 'ready' }),
          version({ version: 'v2', state: 'draining' }),
          version({ version: 'v1', state: 'serving' }),
          version({ version: 'v0', state: 'available' }),
        ],
      },
    ]).view();
    expect(view.replica).toBe(hostname());
    expect(view.generatedAt.getTime()).toBeGreaterThanOrEqual(before);
    expect(view.scenes.map((s) => s.scene)).toEqual(['feed', 'news']);
    const [feed, news] = view.scenes;
    expect(feed.versions.map((v) => [v.version, v.state])).toEqual([
      ['v7', 'incomplete'],
      ['v6', 'failed'],
      ['v5', 'loading'],
      ['v4', 'warming'],
      ['v3', 'ready'],
      ['v2', 'draining'],
      ['v1', 'serving'],
      ['v0', 'available'],
    ]);
    const [v7, v6, v5, v4, v3, , v1, v0] = feed.versions;
    expect(v7.reasons).toEqual([{ message: 'no READY file' }]);
    expect(v7.validation).toEqual(pending('the folder is not complete'));
    expect(v6.reasons).toHaveLength(2);
    expect(v6.validation).toEqual([
      { check: 'schema', outcome: 'pass', messages: [] },
      { check: 'model contract', outcome: 'fail', messages: ['1 problem'] },
      { check: 'dry run', outcome: 'skipped', messages: ['not run'] },
      { check: 'golden', outcome: 'fail', messages: ['1 problem'] },
    ]);
    expect(v5.validation).toEqual(pending('running'));
    expect(v0.validation).toEqual(pending('not loaded on this replica'));
    for (const v of [v3, v1])
      expect(v.validation.map((c) => c.outcome)).toEqual(['pass', 'pass', 'pass', 'pass']);
    expect(v4.validation[3]).toEqual({
      check: 'golden',
      outcome: 'skipped',
      messages: ['no golden.jsonl in the bundle'],
    });
    // The rollout has not read the scene yet: the registry's stable takes everything.
    expect(feed.traffic).toEqual({
      origin: { from: 'default' },
      problems: [],
      stable: 'v1',
      experiments: [],
    });
    expect(news.traffic).toBeUndefined();
    expect(feed.canary).toBeUndefined();
    expect(feed.shadow).toBeUndefined();
  });

  it.each([
    [{ path: 'golden.jsonl:12', message: 'x' }, 'golden'],
    [{ path: 'models', message: 'dry run failed: boom' }, 'dry run'],
    [{ path: 'fusion', message: 'dry run produced a NaN/Inf score' }, 'dry run'],
    [{ path: 'models.ctr.file', message: 'no such file' }, 'model contract'],
    [{ path: 'features.age.default', message: 'must be a number' }, 'schema'],
    [{ message: 'pipeline.yaml is not YAML' }, 'schema'],
  ])('puts %j under %s', (reason, check) => {
    expect(checkOf(reason)).toBe(check);
  });

  it('shows the rollout: split as fractions, who set it, problems, canary guard, shadow', async () => {
    const listing: SceneListing = {
      scene: 'feed',
      stable: 'v1',
      versions: [version({ version: 'v1', state: 'serving' })],
    };
    const rollout: SceneTraffic = {
      scene: 'feed',
      traffic: {
        source: 'override',
        revision: 3,
        kept: true,
        fileChangedSinceOverride: true,
        problems: [{ source: 'file', errors: [{ path: 'canary.percent', message: 'too big' }] }],
        config: {
          stable: 'v1',
          canary: {
            version: 'v2',
            percent: 5,
            guardrail: { window: 60, minRequests: 20, minErrors: 2, maxErrorRatio: 2 },
          },
          experiments: [
            {
              name: 'exp',
              salt: 's',
              arms: [
                { name: 'a', version: 'v1', share: 50 },
                { name: 'b', version: 'v3', share: 25.5 },
              ],
            },
          ],
          shadow: { version: 'v4', percent: 10, topK: 20 },
        },
      },
      override: {
        scene: 'feed',
        revision: 3,
        config: {},
        by: 'guardrail',
        at: '2025-03-04T05:06:07.000Z',
        reason: 'canary v9 rolled back: slow',
      },
      guard: {
        scene: 'feed',
        version: 'v2',
        stableVersion: 'v1',
        state: 'rolled_back',
        guardrail: { window: 60, minRequests: 20, minErrors: 2, maxErrorRatio: 2 },
        canary: { requests: 30, errors: 6, errorRate: 0.2, p99Ms: 12.5 },
        stable: { requests: 0, errors: 0, errorRate: 0 },
        rollback: {
          scene: 'feed',
          version: 'v2',
          stableVersion: 'v1',
          limit: 'maxErrorRatio',
          reason: 'error ratio 20 > 2',
          canary: { requests: 30, errors: 6, errorRate: 0.2, p99Ms: 12.5 },
          stable: { requests: 0, errors: 0, errorRate: 0 },
          at: '2025-03-04T05:06:00.000Z',
        },
      },
      shadows: [
        {
          scene: 'feed',
          version: 'v4',
          primary: 'v1',
          comparisons: 7,
          meanRankCorrelation: 0.5,
          meanOverlapAtK: 0.75,
          meanAbsDelta: 0.01,
          maxAbsDelta: 0.1,
          nonFiniteScores: 1,
          failures: { timed_out: 2 },
        },
        {
          scene: 'feed',
          version: 'v4',
          primary: 'v2',
          comparisons: 0,
          meanOverlapAtK: 0,
          nonFiniteScores: 0,
          failures: {},
        },
        // an earlier shadow's figures are not this shadow's
        {
          scene: 'feed',
          version: 'v0',
          primary: 'v1',
          comparisons: 3,
          meanOverlapAtK: 1,
          nonFiniteScores: 0,
          failures: {},
        },
      ],
    };
    const [feed] = (await source([listing], [rollout]).view()).scenes;
    expect(feed.traffic).toEqual({
      origin: {
        from: 'override',
        by: 'guardrail',
        at: new Date('2025-03-04T05:06:07Z'),
        reason: 'canary v9 rolled back: slow',
        fileChangedSince: true,
      },
      problems: [{ source: 'file', path: 'canary.percent', message: 'too big' }],
      stable: 'v1',
      canary: { version: 'v2', share: 0.05 },
      experiments: [
        {
          name: 'exp',
          arms: [
            { arm: 'a', version: 'v1', share: 0.5 },
            { arm: 'b', version: 'v3', share: 0.255 },
          ],
        },
      ],
      shadow: { version: 'v4', share: 0.1 },
    });
    expect(feed.canary).toEqual({
      version: 'v2',
      stableVersion: 'v1',
      canary: { requests: 30, errorRate: 0.2, p99Ms: 12.5 },
      stable: { requests: 0, errorRate: NaN, p99Ms: NaN },
      limits: { window: 60, minRequests: 20, minErrors: 2, maxErrorRatio: 2 },
      guardrail: {
        state: 'rolled back',
        reason: 'error ratio 20 > 2',
        at: new Date('2025-03-04T05:06:00Z'),
      },
    });
    expect(feed.shadow).toEqual({
      version: 'v4',
      topK: 20,
      against: [
        {
          primary: 'v1',
          comparisons: 7,
          failures: [{ reason: 'timed_out', count: 2 }],
          nonFiniteScores: 1,
          rankCorrelation: 0.5,
          overlapAtK: 0.75,
          meanAbsDelta: 0.01,
          maxAbsDelta: 0.1,
        },
        {
          primary: 'v2',
          comparisons: 0,
          failures: [],
          nonFiniteScores: 0,
          rankCorrelation: NaN,
          overlapAtK: NaN,
          meanAbsDelta: NaN,
          maxAbsDelta: NaN,
        },
      ],
    });

    rollout.traffic = { ...rollout.traffic, source: 'file', problems: [] };
    rollout.guard = { ...rollout.guard!, state: 'collecting' };
    delete rollout.guard.rollback;
    const [again] = (await source([listing], [rollout]).view()).scenes;
    expect(again.traffic?.origin).toEqual({ from: 'file' });
    expect(again.canary?.guardrail).toEqual({ state: 'collecting' });
  });
});
