import { Logger } from '@nestjs/common';
import { BundleInvalidError } from '@app/common';
import { FeatureRow } from '@app/features';
import { ScoringEngine } from '@app/scoring';
import { BundleLimits } from '../scene/bundle-files';
import { dryRunFrame } from '../scene/dry-run-frame';
import { Scene } from '../scene/scene';
import { loadBundle } from '../scene/scene-loader';
import { scoreScene } from '../scene/scene-scorer';
import { LoadedVersion } from './loaded-version';
import { LoadOutcome, RegistryMetrics } from './registry.metrics';
import { SceneEntry } from './scene-entry';
import { readVersionFolder, VersionFolder } from './version-folders';

/** Synthetic requests a new version scores before it may serve, so its first real ones are warm. */
const WARM_UP = { requests: 3, rows: 256 };
/** Most item rows a new version computes its item side from before it serves (hottest first). */
export const WARM_ITEMS_MAX = 20_000;

/**
 * Loads one version folder of a scene: the whole gate (loadBundle), a warm-up, then a second look
 * at the folder. The load is kept only if the folder is unchanged; a failure is recorded on the
 * scene with its reasons, a change is not (the next scan tries again).
 */
export class VersionLoader {
  private readonly logger = new Logger('SceneRegistry');

  constructor(
    private readonly engine: ScoringEngine,
    private readonly root: string,
    private readonly limits: BundleLimits,
    private readonly metrics: RegistryMetrics,
    /** RANK_MAX_CANDIDATES: a model queue smaller than this is worth a warning. */
    private readonly maxCandidates: number,
    /** The item rows the feature store holds (FeatureStore.heldItems): the item side's warm-up. */
    private readonly heldItems: () => Iterable<[string, FeatureRow]> = () => [],
  ) {}

  /** The valid, warm load; undefined if it failed or its files changed meanwhile. */
  async load(
    entry: SceneEntry,
    folder: VersionFolder,
    { staggeredStart }: { staggeredStart: boolean },
  ): Promise<LoadedVersion | undefined> {
    const generation = entry.nextGeneration(folder.version);
    const load = new LoadedVersion(
      entry.name,
      folder.version,
      generation,
      folder.dir,
      folder.fingerprint,
    );
    entry.loads.push(load);
    const label = `bundle ${entry.name}/${folder.version}${generation > 1 ? ` (load ${generation})` : ''}`;
    this.logger.log(`${label}: loading`);
    const started = performance.now();
    let scene: Scene | undefined;
    let failure: unknown;
    try {
      scene = await loadBundle(folder.dir, this.engine, {
        root: this.root,
        limits: this.limits,
        generation,
        staggeredStart,
      });
      load.state = 'warming';
      for (let i = 0; i < WARM_UP.requests; i++)
        await scoreScene(scene, this.engine, dryRunFrame(scene, WARM_UP.rows));
      await this.warmItems(label, scene);
    } catch (error) {
      failure = error;
    }
    const after = await readVersionFolder(folder.dir, folder.version).catch(() => undefined);
    const changed = !after?.complete || after.fingerprint !== folder.fingerprint;
    const ms = Math.round(performance.now() - started);
    if (failure === undefined && !changed) {
      load.scene = scene;
      load.state = 'ready';
      load.loadedAt = Date.now();
      entry.failures.delete(folder.version);
      this.count(entry, 'loaded', ms);
      this.logger.log(`${label}: valid, loaded and warm in ${ms} ms`);
      this.warnSmallQueues(label, scene!);
      return load;
    }
    entry.loads.splice(entry.loads.indexOf(load), 1);
    await this.release(scene);
    if (changed) {
      this.count(entry, 'aborted', ms);
      this.logger.warn(
        `${label}: its files changed while it was loading; abandoned, tried again on the next scan`,
      );
      return undefined;
    }
    const reasons =
      failure instanceof BundleInvalidError
        ? failure.details
        : [{ message: (failure as Error)?.message ?? String(failure) }];
    entry.failures.set(folder.version, {
      fingerprint: folder.fingerprint,
      reasons,
      at: Date.now(),
    });
    this.count(entry, 'rejected', ms);
    this.logger.error(`${label} rejected: ${(failure as Error)?.message ?? failure}`);
    return undefined;
  }

  /** Unloads a version's models from the engine. */
  async release(scene: Scene | undefined): Promise<void> {
    if (!scene) return;
    await Promise.all(
      scene.models.map((m) =>
        this.engine.unload(m.id).catch((error: Error) => {
          this.logger.error(`model ${m.id}: unload failed: ${error.message}`);
        }),
      ),
    );
  }

  /**
   * Computes the new version's item side from the rows the feature store holds, a chunk per
   * event-loop turn, so the first requests after the swap do not compute thousands of items on
   * the serving thread at once. A version whose item side is shared with one loaded before (the
   * same features and inputs: see ItemRowCache.forInputs) finds them computed already.
   */
  private async warmItems(label: string, scene: Scene): Promise<void> {
    const started = performance.now();
    const rows: [string, FeatureRow][] = [];
    for (const held of this.heldItems()) {
      if (rows.length === WARM_ITEMS_MAX) break;
      rows.push(held);
    }
    if (rows.length === 0) return;
    const kept = await scene.items.warm(rows);
    const ms = Math.round(performance.now() - started);
    const shared = scene.itemsShared ? ' (item side shared with a loaded version)' : '';
    this.logger.log(
      `${label}: item side warm, ${kept} of ${rows.length} held items computed in ${ms} ms${shared}`,
    );
  }

  /**
   * A model queue below RANK_MAX_CANDIDATES is allowed (it bounds a heavy model's memory, and a
   * bundle must not be valid in one deployment and not in another), but requests between the two
   * are refused with REQUEST_TOO_LARGE: say so once, at load, with the setting to change.
   */
  private warnSmallQueues(label: string, scene: Scene): void {
    for (const model of scene.models) {
      if (model.maxRows >= this.maxCandidates) continue;
      this.logger.warn(
        `${label}: models.${model.name}.batching.maxQueueRows is ${model.maxRows}, below RANK_MAX_CANDIDATES (${this.maxCandidates}): requests of more than ${model.maxRows} candidates will be refused with 413 REQUEST_TOO_LARGE`,
      );
    }
  }

  private count(entry: SceneEntry, outcome: LoadOutcome, ms: number): void {
    this.metrics.loads.inc({ scene: entry.name, outcome });
    this.metrics.loadMs.observe({ scene: entry.name, outcome }, ms);
  }
}
