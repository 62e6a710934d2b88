import { Logger } from '@nestjs/common';
import { LoadedVersion } from './loaded-version';
import { RegistryMetrics } from './registry.metrics';
import { SceneEntry } from './scene-entry';
import { VersionLoader } from './version-loader';

/**
 * Brings one scene's loads in line with its folders (as last scanned) and its policy: picks the
 * stable version (the pinned one if it can serve, else the newest valid one), loads what is
 * wanted and not loaded yet (VersionLoader, beside what serves), swaps the stable version in one
 * assignment and drains every other valid load, releasing its models once its last request has
 * finished. The registry runs it for one scene at a time.
 */
export class SceneReconciler {
  private readonly logger = new Logger('SceneRegistry');

  constructor(
    private readonly loader: VersionLoader,
    private readonly metrics: RegistryMetrics,
    /** Called once a drained load of `entry` has released its models. */
    private readonly onDrained: (entry: SceneEntry) => void,
  ) {}

  /** `staggeredStart`: traffic runs, so new model threads start one at a time. */
  async reconcile(entry: SceneEntry, { staggeredStart }: { staggeredStart: boolean }) {
    const stable = await this.pickStable(entry, staggeredStart);
    const wanted = new Set<LoadedVersion | undefined>([stable]);
    for (const version of entry.policy.keep ?? [])
      wanted.add(await this.ensure(entry, version, staggeredStart));
    this.promote(entry, stable);
    for (const load of wanted) if (load && load !== stable) load.state = 'ready';
    this.retire(entry, wanted);
  }

  /** The pinned version if it can serve, else the newest version that can. */
  private async pickStable(
    entry: SceneEntry,
    staggeredStart: boolean,
  ): Promise<LoadedVersion | undefined> {
    const pinned = entry.policy.stable;
    if (pinned !== undefined) {
      const load = await this.ensure(entry, pinned, staggeredStart);
      if (load) return load;
      this.logger.warn(
        `scene ${entry.name}: pinned version ${pinned} cannot serve; the newest valid one does`,
      );
    }
    for (const folder of entry.folders) {
      const load = await this.ensure(entry, folder.version, staggeredStart);
      if (load) return load;
    }
    return undefined;
  }

  /**
   * A valid load of `version` as its folder is now, loading it if needed; else the load that
   * serves already (its folder changed into something incomplete, invalid or still changing);
   * undefined if the folder is gone or none is valid.
   */
  private async ensure(
    entry: SceneEntry,
    version: string,
    staggeredStart: boolean,
  ): Promise<LoadedVersion | undefined> {
    const folder = entry.folder(version);
    if (!folder) return undefined;
    const current = entry.usable(version);
    if (!folder.complete || current?.fingerprint === folder.fingerprint) return current;
    if (entry.failures.get(version)?.fingerprint === folder.fingerprint) return current;
    const loaded = await this.loader.load(entry, folder, { staggeredStart });
    return loaded ?? current;
  }

  /** Makes `stable` the version requests get, in one assignment. */
  private promote(entry: SceneEntry, stable: LoadedVersion | undefined): void {
    const previous = entry.stable;
    if (previous === stable) return;
    entry.stable = stable;
    const was = previous ? ` (was ${previous.version})` : '';
    if (!stable) {
      this.logger.warn(`scene ${entry.name} serves nothing: no valid version${was}`);
      return;
    }
    stable.state = 'serving';
    stable.servingSince = Date.now();
    this.logger.log(`scene ${entry.name} serves ${stable.version}${was}`);
    if (previous && entry.changedAt !== undefined)
      this.metrics.swapMs.observe({ scene: entry.name }, Date.now() - entry.changedAt);
  }

  /** Every valid load not wanted drains, then releases its models once idle. */
  private retire(entry: SceneEntry, wanted: ReadonlySet<LoadedVersion | undefined>): void {
    for (const load of entry.loads) {
      if (wanted.has(load) || !load.usable) continue;
      load.state = 'draining';
      const since = Date.now();
      this.logger.log(
        `bundle ${entry.name}/${load.version}: draining (${load.inFlight} request(s) in flight)`,
      );
      void load.whenIdle().then(async () => {
        await this.loader.release(load.scene);
        const index = entry.loads.indexOf(load);
        if (index >= 0) entry.loads.splice(index, 1);
        this.metrics.drainMs.observe({ scene: entry.name }, Date.now() - since);
        this.logger.log(`bundle ${entry.name}/${load.version}: drained, models released`);
        this.onDrained(entry);
      });
    }
  }
}
