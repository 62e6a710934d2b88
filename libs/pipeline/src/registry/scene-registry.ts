import {
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
  Optional,
} from '@nestjs/common';
import { SceneNotFoundError, SceneNotReadyError } from '@app/common';
import { FeatureStore } from '@app/features';
import { ScoringEngine } from '@app/scoring';
import { resolve } from 'node:path';
import { PipelineConfig } from '../pipeline.config';
import { RegistryMetrics } from './registry.metrics';
import { SceneEntry } from './scene-entry';
import { SceneReconciler } from './scene-reconciler';
import {
  ReloadNotice,
  ReloadOrigin,
  SceneLease,
  SceneListing,
  VersionPolicy,
} from './scene-listing';
import { FOLDER_NAME, sceneNames, versionFolders } from './version-folders';
import { VersionLoader } from './version-loader';

export interface SceneStatus {
  scene: string;
  version: string;
}

export interface ReloadOptions {
  /** Load again versions that failed, even if their files did not change. */
  retryFailed?: boolean;
  origin?: ReloadOrigin | 'policy';
}

/** Told after each scan which scenes it covered and what asked for it. */
export type ScanListener = (
  scenes: string[],
  origins: ReadonlySet<ReloadOrigin | 'policy'>,
) => void;

/** Scans waiting to run: merged, so a burst of triggers costs one scan. */
interface PendingPass {
  scenes: Set<string> | 'all';
  retry: Set<string> | 'all';
  origins: Set<ReloadOrigin | 'policy'>;
  done: Promise<void>;
}

/**
 * Holds the loaded versions of every scene and which one is stable. It follows BUNDLES_DIR: each
 * scan (at boot, on the poll timer, on an admin reload, on another replica's notice) reads the
 * version folders, loads in the background every version that should serve and is not loaded
 * yet (the whole gate, then a warm-up) while the current one keeps serving, then swaps the stable
 * version in one assignment (SceneReconciler, per scene). A version no longer wanted drains: new requests never get it, and
 * its models are released once the requests holding a lease on it have finished. A version that
 * fails is kept with its reasons and not loaded again until its files change.
 *
 * Several loads of a scene may live at once (the stable one, those the rollout keeps through
 * setPolicy, the one being loaded, those draining), each with its own state and lease count.
 * Scans run one at a time, scene after scene.
 */
@Injectable()
export class SceneRegistry implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(SceneRegistry.name);
  private readonly entries = new Map<string, SceneEntry>();
  private readonly policies = new Map<string, VersionPolicy>();
  private readonly listeners = new Set<(notice: ReloadNotice) => void>();
  private readonly scanListeners = new Set<ScanListener>();
  private readonly root: string;
  private readonly loader: VersionLoader;
  private readonly reconciler: SceneReconciler;
  private boot: Promise<void> | undefined;
  private booted = false;
  private closed = false;
  private tail: Promise<void> = Promise.resolve();
  private next: PendingPass | undefined;

  constructor(
    engine: ScoringEngine,
    config: PipelineConfig,
    private readonly metrics: RegistryMetrics,
    /** Where a new version's item side is warmed from; none, no warm-up (unit specs). */
    @Optional() store?: FeatureStore,
  ) {
    this.root = resolve(config.BUNDLES_DIR);
    this.loader = new VersionLoader(
      engine,
      this.root,
      config.bundleLimits,
      metrics,
      config.RANK_MAX_CANDIDATES,
      () => store?.heldItems() ?? [],
    );
    this.reconciler = new SceneReconciler(this.loader, metrics, (entry) => {
      if (entry.gone && this.entries.get(entry.name) === entry) this.entries.delete(entry.name);
    });
    metrics.watch(() => this.list());
  }

  onApplicationBootstrap(): void {
    this.boot = this.reload(undefined, { origin: 'boot' }).then(() => {
      this.booted = true;
      if (!this.ready) this.logger.error(`no valid bundle under ${this.root}`);
    });
  }

  /** Resolves once the boot-time scan has finished, whatever its outcome. */
  whenLoaded(): Promise<void> {
    return this.boot ?? Promise.resolve();
  }

  get ready(): boolean {
    return this.booted && [...this.entries.values()].some((e) => e.stable);
  }

  /** The stable version of each scene that has one. */
  status(): SceneStatus[] {
    return [...this.entries.values()]
      .filter((e) => e.stable)
      .map((e) => ({ scene: e.name, version: e.stable!.version }));
  }

  /**
   * Leases the stable version of `scene` (or, for the rollout, its loaded version `version`) for
   * one request: the request runs on it to the end, whatever swaps meanwhile. Release it once.
   */
  acquire(scene: string, version?: string): SceneLease {
    const entry = this.entries.get(scene);
    const load = version === undefined ? entry?.stable : entry?.usable(version);
    if (!load?.scene) throw this.notServing(scene, entry, version);
    load.lease();
    let released = false;
    return {
      scene: load.scene,
      release: () => {
        if (released) return;
        released = true;
        load.release();
      },
    };
  }

  /** The stable version's name, if the scene has one. */
  stableVersion(scene: string): string | undefined {
    return this.entries.get(scene)?.stable?.version;
  }

  /** Every scene with its versions and their states, for the admin API and the metrics. */
  list(): SceneListing[] {
    return [...this.entries.values()]
      .map((entry) => entry.listing())
      .sort((a, b) => a.scene.localeCompare(b.scene));
  }

  describe(scene: string): SceneListing | undefined {
    return this.entries.get(scene)?.listing();
  }

  /**
   * Scans BUNDLES_DIR (one scene, or all) now, or right after the scan that is running, and
   * resolves when that scan has loaded, swapped and retired what it found. An admin reload is
   * also announced to the other replicas (onNotice).
   */
  reload(scene?: string, { retryFailed = false, origin = 'admin' }: ReloadOptions = {}) {
    if (this.closed || (scene !== undefined && !FOLDER_NAME.test(scene))) return Promise.resolve();
    if (origin === 'admin') this.notify({ ...(scene !== undefined && { scene }), retryFailed });
    const pending = (this.next ??= this.schedule());
    if (scene === undefined) pending.scenes = 'all';
    else if (pending.scenes !== 'all') pending.scenes.add(scene);
    if (retryFailed && scene === undefined) pending.retry = 'all';
    else if (retryFailed && pending.retry !== 'all') pending.retry.add(scene!);
    pending.origins.add(origin);
    return pending.done;
  }

  /**
   * For the rollout: which versions of `scene` to pin as stable and keep loaded. Applied by a scan
   * of the scene; resolves when the versions are loaded (or have failed).
   */
  setPolicy(scene: string, policy: VersionPolicy): Promise<void> {
    this.policies.set(scene, policy);
    return this.reload(scene, { origin: 'policy' });
  }

  /** Tells the other replicas to scan `scene` now (a traffic change they must pick up). */
  announce(scene: string): void {
    this.notify({ scene, retryFailed: false });
  }

  /** `listener` hears of each change this replica saw and each admin reload; returns an unsubscribe. */
  onNotice(listener: (notice: ReloadNotice) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * `listener` hears of each finished scan (the rollout re-reads each scene's traffic config
   * then); it must only start its work, the next scan does not wait for it. Returns an unsubscribe.
   */
  onScanned(listener: ScanListener): () => void {
    this.scanListeners.add(listener);
    return () => this.scanListeners.delete(listener);
  }

  /**
   * Models are released only after the HTTP server has closed and its in-flight requests have
   * finished (Nest runs this hook after disposing of the server), so a shutdown never fails a
   * request that was already being ranked. A scan that is running finishes first.
   */
  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    await this.tail;
    const loads = [...this.entries.values()].flatMap((e) => e.loads);
    this.entries.clear();
    await Promise.all(loads.map((load) => this.loader.release(load.scene)));
  }

  private schedule(): PendingPass {
    const pending: PendingPass = {
      scenes: new Set(),
      retry: new Set(),
      origins: new Set(),
      done: Promise.resolve(),
    };
    pending.done = this.tail.then(() => {
      this.next = undefined;
      return this.pass(pending);
    });
    this.tail = pending.done;
    return pending;
  }

  private async pass(pending: PendingPass): Promise<void> {
    if (this.closed) return;
    let names: string[];
    try {
      names = await sceneNames(this.root);
    } catch (error) {
      // An unmounted or unreadable BUNDLES_DIR is not a request to stop serving.
      this.logger.error(`${(error as Error).message}; every loaded version keeps its state`);
      return;
    }
    if (pending.scenes !== 'all') names = [...pending.scenes];
    else for (const known of this.entries.keys()) if (!names.includes(known)) names.push(known);
    for (const name of names) {
      if (this.closed) return;
      try {
        await this.reconcile(name, pending);
      } catch (error) {
        this.logger.error(
          `scene ${name}: scan failed, nothing changed: ${(error as Error).message}`,
        );
      }
    }
    for (const listener of this.scanListeners) {
      try {
        listener(names, pending.origins);
      } catch (error) {
        this.logger.error(`scan listener failed: ${(error as Error).stack}`);
      }
    }
  }

  /** Takes one scene's folders and policy, then brings its loads in line (SceneReconciler). */
  private async reconcile(name: string, pending: PendingPass): Promise<void> {
    const folders = await versionFolders(this.root, name);
    let entry = this.entries.get(name);
    if (!entry) {
      if (folders.length === 0) return;
      entry = new SceneEntry(name);
      this.entries.set(name, entry);
    }
    entry.policy = this.policies.get(name) ?? {};
    const changed = entry.update(folders);
    const retry = pending.retry === 'all' || pending.retry.has(name);
    if (retry) entry.failures.clear();
    if (changed || retry) entry.changedAt ??= Date.now();
    if (changed && pending.origins.has('poll')) this.notify({ scene: name, retryFailed: false });

    // After boot, traffic runs: the new model threads start one at a time beside the serving ones.
    await this.reconciler.reconcile(entry, { staggeredStart: this.booted });
    entry.changedAt = undefined;
    if (entry.gone) this.entries.delete(name);
  }

  private notServing(scene: string, entry: SceneEntry | undefined, version?: string): Error {
    const loading = entry?.loads.some((l) => l.state === 'loading' || l.state === 'warming');
    if (version !== undefined && entry?.stable)
      return new SceneNotReadyError(`version ${version} of scene '${scene}' is not loaded`);
    if (!this.booted || loading) return new SceneNotReadyError(`scene '${scene}' is still loading`);
    return new SceneNotFoundError(scene);
  }

  private notify(notice: ReloadNotice): void {
    for (const listener of this.listeners) listener(notice);
  }
}
