/**
 * SceneRegistry with the real engine (worker threads, onnxruntime) on a temp BUNDLES_DIR built
 * from the example bundle: versions appearing, changing, failing, disappearing; leases holding a
 * version through a swap; the rollout's policy. Scans are triggered with reload() (the poller only
 * calls it on a timer).
 */
import 'reflect-metadata';
import { SceneNotFoundError } from '@app/common';
import { smallWorkerEngine, WorkerScoringEngine } from '@app/scoring/testing';
import { Logger } from '@nestjs/common';
import {
  appendFile,
  mkdtemp,
  readFile,
  rename,
  rm,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Registry } from 'prom-client';
import { parse, stringify } from 'yaml';
import { writeVersion } from '../../../../test/support/bundle-versions';
import { PipelineConfig } from '../pipeline.config';
import { RegistryMetrics } from './registry.metrics';
import { SceneRegistry } from './scene-registry';
import { VersionListing } from './scene-listing';

describe('SceneRegistry (real engine, temp BUNDLES_DIR)', () => {
  let root: string;
  let engine: WorkerScoringEngine;
  let registry: SceneRegistry;
  let metrics: Registry;

  const rows = (scene = 'feed'): Pick<VersionListing, 'version' | 'state'>[] =>
    (registry.describe(scene)?.versions ?? []).map(({ version, state }) => ({ version, state }));
  const row = (version: string, state: string) =>
    registry.describe('feed')!.versions.find((v) => v.version === version && v.state === state);
  const serving = () => {
    const lease = registry.acquire('feed');
    lease.release();
    return lease.scene.spec.version;
  };
  const loadedIds = (version: string) =>
    ['ctr', 'mtl'].filter((m) => engine.pool(`feed/${version}/${m}`) !== undefined);
  const until = async (check: () => boolean, what: string) => {
    for (const end = Date.now() + 20_000; !check(); await sleep(10))
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
  };
  const metric = async (name: string, labels: string) => {
    const text = await metrics.metrics();
    const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
    return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
  };

  beforeAll(() => {
    Logger.overrideLogger(['error']);
    engine = smallWorkerEngine();
  });

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'ranker-registry-'));
    await writeVersion(root, 'feed', 'v1');
  });

  async function boot(): Promise<void> {
    metrics = new Registry();
    registry = new SceneRegistry(
      engine,
      Object.assign(new PipelineConfig(), { BUNDLES_DIR: root }),
      new RegistryMetrics(metrics),
    );
    registry.onApplicationBootstrap();
    await registry.whenLoaded();
  }

  afterEach(async () => {
    await registry?.onApplicationShutdown();
    await rm(root, { recursive: true, force: true });
  });

  afterAll(() => engine.onApplicationShutdown());

  it('serves the newest complete version; a folder without READY is listed and never loaded', async () => {
    await writeVersion(root, 'feed', 'v2', { ready: false, via: 'in-place' });
    await boot();
    expect(registry.ready).toBe(true);
    expect(serving()).toBe('v1');
    expect(rows()).toEqual([
      { version: 'v2', state: 'incomplete' },
      { version: 'v1', state: 'serving' },
    ]);
    expect(row('v2', 'incomplete')!.reasons[0].message).toMatch(/^no READY file: write it last/);
    expect(loadedIds('v2')).toEqual([]);
  });

  it('takes a complete folder whatever the order its files were written in (a git checkout)', async () => {
    const dir = await writeVersion(root, 'feed', 'v2');
    const later = new Date(Date.now() + 5000);
    await utimes(join(dir, 'golden.jsonl'), later, later);
    await boot();
    expect(serving()).toBe('v2');
  });

  it('serves a version whose model queue is below RANK_MAX_CANDIDATES and warns once, naming the setting', async () => {
    // 100 rows: under the 256-row warm-up too, which must fit the queue rather than fail.
    await writeVersion(root, 'feed', 'v2', {
      edit: (yaml) => (yaml.models.ctr.batching = { maxQueueRows: 100 }),
    });
    const warnings: string[] = [];
    Logger.overrideLogger({
      log: () => undefined,
      error: () => undefined,
      warn: (message: string) => warnings.push(message),
    });
    try {
      await boot();
    } finally {
      Logger.overrideLogger(['error']);
    }
    expect(serving()).toBe('v2');
    const { RANK_MAX_CANDIDATES } = new PipelineConfig();
    expect(warnings).toEqual([
      `bundle feed/v2: models.ctr.batching.maxQueueRows is 100, below RANK_MAX_CANDIDATES (${RANK_MAX_CANDIDATES}): requests of more than 100 candidates will be refused with 413 REQUEST_TOO_LARGE`,
    ]);
  });

  it('lists a version folder linked out of BUNDLES_DIR as failed, with the reason', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'ranker-outside-'));
    try {
      await writeVersion(outside, 'feed', 'v2');
      await symlink(join(outside, 'feed', 'v2'), join(root, 'feed', 'v2'));
      await boot();
      expect(serving()).toBe('v1');
      expect(row('v2', 'failed')!.reasons).toEqual([
        {
          message: expect.stringMatching(
            /^the version folder resolves to .*outside the bundles folder/,
          ),
        },
      ]);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('swaps to a dropped version and releases the old one once its last request has finished', async () => {
    await boot();
    const held = registry.acquire('feed');
    expect(held.scene.spec.version).toBe('v1');
    await writeVersion(root, 'feed', 'v2');
    await registry.reload(undefined, { origin: 'poll' });
    expect(serving()).toBe('v2');
    expect(rows()).toEqual([
      { version: 'v2', state: 'serving' },
      { version: 'v1', state: 'draining' },
    ]);
    expect(row('v1', 'draining')!.inFlight).toBe(1);
    // The request that started on v1 still runs on v1's models.
    expect(loadedIds('v1')).toEqual(['ctr', 'mtl']);
    held.release();
    await until(() => loadedIds('v1').length === 0, 'v1 to be released');
    await until(() => row('v1', 'available') !== undefined, 'v1 to be listed as on disk only');
    expect(rows()).toEqual([
      { version: 'v2', state: 'serving' },
      { version: 'v1', state: 'available' },
    ]);
    expect(await metric('ranker_bundle_reloads_total', 'scene="feed",outcome="loaded"')).toBe(2);
    expect(await metric('ranker_bundle_swap_ms_count', 'scene="feed"')).toBe(1);
    expect(
      await metric('ranker_bundle_versions', 'scene="feed",version="v2",state="serving"'),
    ).toBe(1);
  });

  it('keeps serving when a newer version fails, lists every reason, and retries only on change or when asked', async () => {
    await boot();
    await writeVersion(root, 'feed', 'v2', {
      edit: (y) => {
        y.fusion = 'pow(ctr.ctrr, 0.7)';
        y.models.mtl.inputs = {
          ids: y.models.mtl.inputs.sparse_ids,
          dense: { ...y.models.mtl.inputs.dense },
        };
      },
    });
    await registry.reload('feed');
    expect(serving()).toBe('v1');
    const failed = row('v2', 'failed')!;
    expect(failed.reasons.map((r) => r.path)).toEqual(
      expect.arrayContaining(['fusion', 'models.mtl.inputs']),
    );
    expect(failed.failedAt).toBeDefined();
    await registry.reload('feed');
    expect(await metric('ranker_bundle_reloads_total', 'scene="feed",outcome="rejected"')).toBe(1);
    await registry.reload('feed', { retryFailed: true });
    expect(await metric('ranker_bundle_reloads_total', 'scene="feed",outcome="rejected"')).toBe(2);
    expect(serving()).toBe('v1');
  });

  it('falls back to the older version when the serving one is removed, serving meanwhile', async () => {
    await writeVersion(root, 'feed', 'v2');
    await boot();
    expect(serving()).toBe('v2');
    expect(loadedIds('v1')).toEqual([]);
    await rm(join(root, 'feed', 'v2'), { recursive: true });
    const scan = registry.reload('feed');
    // v1 loads in the background; the removed v2 serves until it is ready.
    await until(() => row('v1', 'loading') !== undefined, 'v1 to load');
    expect(serving()).toBe('v2');
    await scan;
    expect(serving()).toBe('v1');
    await until(() => loadedIds('v2').length === 0, 'v2 to be released');
  });

  it('loads a version changed in place as a second load beside the first; a broken change keeps the first', async () => {
    const dir = join(root, 'feed', 'v1');
    await boot();
    const yaml = join(dir, 'pipeline.yaml');
    await writeFile(
      yaml,
      stringify({ ...parse(await readFile(yaml, 'utf8')), description: 'changed in place' }),
    );
    await writeFile(join(dir, 'READY'), '');
    await registry.reload('feed');
    expect(registry.describe('feed')!.versions[0]).toMatchObject({
      version: 'v1',
      state: 'serving',
      generation: 2,
    });
    expect(registry.acquire('feed').scene.spec.description).toBe('changed in place');
    await until(() => loadedIds('v1').length === 0, 'the first load to be released');
    expect(['ctr', 'mtl'].map((m) => engine.pool(`feed/v1#2/${m}`) !== undefined)).toEqual([
      true,
      true,
    ]);

    await writeFile(join(dir, 'ctr.onnx'), 'not onnx any more');
    await writeFile(join(dir, 'READY'), '');
    await registry.reload('feed');
    expect(rows()).toEqual([
      { version: 'v1', state: 'serving' },
      { version: 'v1', state: 'failed' },
    ]);
    expect(row('v1', 'failed')!.reasons.map((r) => r.path)).toEqual(['models.ctr.file']);
    expect(registry.acquire('feed').scene.spec.description).toBe('changed in place');
  });

  it('abandons a load whose files change meanwhile, and loads the version on the next scan', async () => {
    await boot();
    const dir = await writeVersion(root, 'feed', 'v2');
    const scan = registry.reload('feed');
    await until(() => row('v2', 'loading') !== undefined, 'v2 to start loading');
    await appendFile(join(dir, 'golden.jsonl'), '\n');
    await scan;
    expect(serving()).toBe('v1');
    expect(await metric('ranker_bundle_reloads_total', 'scene="feed",outcome="aborted"')).toBe(1);
    await registry.reload('feed');
    expect(serving()).toBe('v2');
  });

  it('follows the rollout policy: a pinned stable version, and versions kept loaded beside it', async () => {
    await writeVersion(root, 'feed', 'v2');
    await boot();
    await registry.setPolicy('feed', { stable: 'v1', keep: ['v2'] });
    expect(serving()).toBe('v1');
    expect(rows()).toEqual([
      { version: 'v2', state: 'ready' },
      { version: 'v1', state: 'serving' },
    ]);
    const canary = registry.acquire('feed', 'v2');
    expect(canary.scene.spec.version).toBe('v2');
    canary.release();
    await registry.setPolicy('feed', {});
    expect(serving()).toBe('v2');
    await until(() => loadedIds('v1').length === 0, 'v1 to be released');
    expect(() => registry.acquire('feed', 'v1')).toThrow('version v1 of scene');
  });

  it('stops serving a scene whose folder is removed, and changes nothing while BUNDLES_DIR is gone', async () => {
    await boot();
    const moved = `${root}-moved`;
    await rename(root, moved);
    await registry.reload(undefined, { origin: 'poll' });
    expect(serving()).toBe('v1');
    await rename(moved, root);
    await rm(join(root, 'feed'), { recursive: true });
    await registry.reload(undefined, { origin: 'poll' });
    expect(() => registry.acquire('feed')).toThrow(SceneNotFoundError);
    await until(() => registry.describe('feed') === undefined, 'the scene to leave the list');
    expect(loadedIds('v1')).toEqual([]);
  });

  it('announces what a poll saw change and every admin reload, not what it was told', async () => {
    await boot();
    const notices: unknown[] = [];
    registry.onNotice((n) => notices.push(n));
    await registry.reload(undefined, { origin: 'poll' });
    expect(notices).toEqual([]);
    await writeVersion(root, 'feed', 'v2', { ready: false, via: 'in-place' });
    await registry.reload(undefined, { origin: 'poll' });
    await registry.reload('feed', { origin: 'broadcast' });
    await registry.reload('feed', { retryFailed: true });
    expect(notices).toEqual([
      { scene: 'feed', retryFailed: false },
      { scene: 'feed', retryFailed: true },
    ]);
  });
});
