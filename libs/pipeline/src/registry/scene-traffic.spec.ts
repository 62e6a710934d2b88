import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { SceneNotReadyError } from '@app/common';
import { Registry } from 'prom-client';
import { PipelineConfig } from '../pipeline.config';
import { InMemoryTrafficStore } from '../rollout/in-memory-traffic-store';
import { TrafficStore } from '../rollout/traffic-store';
import { RolloutMetrics } from '../rollout/rollout.metrics';
import { ShadowMetrics } from '../rollout/shadow.metrics';
import { SceneListing } from './scene-listing';
import { SceneRegistry } from './scene-registry';
import { SceneTrafficControl, TRAFFIC_STORE_READ_TIMEOUT_MS } from './scene-traffic';

describe('SceneTrafficControl', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'scene-traffic-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  /** The registry's side, with setPolicy held until `loaded()` (the new versions loading). */
  const registryOf = () => {
    const listing: SceneListing = {
      scene: 'feed',
      stable: 'v1',
      versions: ['v2', 'v1'].map((version) => ({
        version,
        state: 'serving',
        reasons: [],
        inFlight: 0,
        dir: join(root, 'feed', version),
      })),
    };
    let loaded = () => {};
    const gate = new Promise<void>((resolve) => (loaded = resolve));
    let asked = () => {};
    const policyAsked = new Promise<void>((resolve) => (asked = resolve));
    const registry = {
      onScanned: () => () => {},
      whenLoaded: () => Promise.resolve(),
      list: () => [listing],
      describe: (scene: string) => (scene === 'feed' ? listing : undefined),
      stableVersion: (scene: string) => (scene === 'feed' ? listing.stable : undefined),
      setPolicy: () => (asked(), gate),
      announce: () => {},
    };
    return { registry: registry as unknown as SceneRegistry, loaded, policyAsked };
  };

  /** The control under test, over `registry` and `store`, with metrics of its own. */
  const controlOf = (registry: SceneRegistry, store: TrafficStore = new InMemoryTrafficStore()) => {
    const metrics = new Registry();
    return new SceneTrafficControl(
      registry,
      store,
      new RolloutMetrics(metrics),
      new ShadowMetrics(metrics),
      Object.assign(new PipelineConfig(), { BUNDLES_DIR: root }),
    );
  };

  it('shows the override the traffic in force came from, not a newer one still being applied', async () => {
    const { registry, loaded, policyAsked } = registryOf();
    const store = new InMemoryTrafficStore();
    const control = controlOf(registry, store);
    await control.refresh('feed');
    expect(control.describe('feed')).toMatchObject({ traffic: { source: 'default' } });
    expect(control.describe('feed')!.override).toBeUndefined();

    // Another replica stores a canary; this one reads it and waits for v2 to load.
    await store.set(
      'feed',
      { stable: 'v1', canary: { version: 'v2', percent: 50 } },
      { versions: ['v1', 'v2'], by: 'admin' },
    );
    const applying = control.refresh('feed');
    await policyAsked;
    const meanwhile = control.describe('feed')!;
    expect(meanwhile.traffic.source).toBe('default');
    expect(meanwhile.override).toBeUndefined();
    expect(control.choose('feed', 'u1')).toBeUndefined();

    loaded();
    await applying;
    const after = control.describe('feed')!;
    expect(after.traffic).toMatchObject({ source: 'override', revision: 1 });
    expect(after.override).toMatchObject({ by: 'admin', revision: 1 });
    control.onApplicationShutdown();
  });

  it('counts the boot as applied only once every scene the registry holds has its traffic in force', async () => {
    const { registry, loaded, policyAsked } = registryOf();
    mkdirSync(join(root, 'feed'), { recursive: true });
    writeFileSync(join(root, 'feed', 'traffic.yaml'), 'stable: v1\n');
    const control = controlOf(registry);
    control.onApplicationBootstrap();
    let settled = false;
    void control.whenApplied().then(() => (settled = true));
    // traffic.yaml pins v1: its policy is asked for, and held while v1 "loads".
    await policyAsked;
    expect(control.bootTrafficApplied).toBe(false);
    expect(settled).toBe(false);
    loaded();
    await control.whenApplied();
    expect(control.bootTrafficApplied).toBe(true);
    expect(control.describe('feed')).toMatchObject({ traffic: { source: 'file' } });
    control.onApplicationShutdown();
  });

  it('a traffic store that never answers holds a refresh for TRAFFIC_STORE_READ_TIMEOUT_MS, then the file applies', async () => {
    const { registry, loaded } = registryOf();
    loaded();
    mkdirSync(join(root, 'feed'), { recursive: true });
    writeFileSync(join(root, 'feed', 'traffic.yaml'), 'stable: v1\n');
    const store = new InMemoryTrafficStore();
    store.reload = () => new Promise<void>(() => undefined);
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const control = controlOf(registry, store);
    const started = performance.now();
    control.onApplicationBootstrap();
    await control.whenApplied();
    expect(performance.now() - started).toBeGreaterThanOrEqual(TRAFFIC_STORE_READ_TIMEOUT_MS - 50);
    expect(control.bootTrafficApplied).toBe(true);
    expect(control.describe('feed')).toMatchObject({ traffic: { source: 'file' } });
    expect(warn.mock.calls.map(String).join('\n')).toContain(
      `traffic override not read (no answer within ${TRAFFIC_STORE_READ_TIMEOUT_MS} ms)`,
    );
    warn.mockRestore();
    control.onApplicationShutdown();
  });

  it('holds a scene that appears after boot (503) until its traffic is applied, so its newest version never answers before a pinned stable', async () => {
    const listingOf = (scene: string): SceneListing => ({
      scene,
      stable: 'v2',
      versions: ['v2', 'v1'].map((version) => ({
        version,
        state: 'serving',
        reasons: [],
        inFlight: 0,
        dir: join(root, scene, version),
      })),
    });
    const scenes = new Map([['feed', listingOf('feed')]]);
    let scanned: (names: string[], origins: Set<string>) => void = () => {};
    let loaded = () => {};
    const gate = new Promise<void>((resolve) => (loaded = resolve));
    let asked = () => {};
    const policyAsked = new Promise<void>((resolve) => (asked = resolve));
    const registry = {
      onScanned: (listener: typeof scanned) => ((scanned = listener), () => {}),
      whenLoaded: () => Promise.resolve(),
      list: () => [...scenes.values()],
      describe: (scene: string) => scenes.get(scene),
      stableVersion: (scene: string) => scenes.get(scene)?.stable ?? undefined,
      setPolicy: (scene: string) => (scene === 'news' ? (asked(), gate) : Promise.resolve()),
      announce: () => {},
    } as unknown as SceneRegistry;
    const control = controlOf(registry);
    control.onApplicationBootstrap();
    await control.whenApplied();
    expect(control.choose('feed', 'u1')).toBeUndefined();
    expect(control.choose('nowhere', 'u1')).toBeUndefined();

    // A scan finds `news` (its newest version already serving in the registry) with traffic.yaml
    // pinning v1: refused until the refresh has v1 pinned, then v1 is chosen.
    mkdirSync(join(root, 'news'), { recursive: true });
    writeFileSync(join(root, 'news', 'traffic.yaml'), 'stable: v1\n');
    scenes.set('news', listingOf('news'));
    expect(() => control.choose('news', 'u1')).toThrow(SceneNotReadyError);
    scanned(['news'], new Set(['poll']));
    await policyAsked;
    expect(() => control.choose('news', 'u1')).toThrow(
      "scene 'news' is applying its traffic config",
    );
    loaded();
    await control.refresh('news');
    expect(control.choose('news', 'u1')).toMatchObject({ version: 'v1', arm: 'stable' });
    control.onApplicationShutdown();
  });
});
