import { ErrorDetail } from '@app/common';
import { LoadedVersion } from './loaded-version';
import { SceneListing, VersionListing, VersionPolicy } from './scene-listing';
import { naturalOrder, VersionFolder } from './version-folders';

/** A version whose files, as fingerprinted, failed the gate: not loaded again until they change. */
export interface Failure {
  fingerprint: string;
  reasons: ErrorDetail[];
  at: number;
}

/** Everything the registry knows of one scene: its folders, its loads, its failures, its policy. */
export class SceneEntry {
  /** As of the last scan, newest first. */
  folders: VersionFolder[] = [];
  readonly loads: LoadedVersion[] = [];
  stable: LoadedVersion | undefined;
  readonly failures = new Map<string, Failure>();
  policy: VersionPolicy = {};
  /** When a change was first seen (or a reload asked for) that has not reached serving yet. */
  changedAt: number | undefined;
  private readonly generations = new Map<string, number>();

  constructor(readonly name: string) {}

  nextGeneration(version: string): number {
    const next = (this.generations.get(version) ?? 0) + 1;
    this.generations.set(version, next);
    return next;
  }

  folder(version: string): VersionFolder | undefined {
    return this.folders.find((f) => f.version === version);
  }

  /** The newest valid load of `version`. */
  usable(version: string): LoadedVersion | undefined {
    let best: LoadedVersion | undefined;
    for (const load of this.loads)
      if (load.version === version && load.usable && (!best || load.generation > best.generation))
        best = load;
    return best;
  }

  /** Takes a new scan; true if a folder appeared, changed or disappeared since the last one. */
  update(folders: VersionFolder[]): boolean {
    const before = new Map(this.folders.map((f) => [f.version, f.fingerprint]));
    const changed =
      folders.length !== before.size ||
      folders.some((f) => before.get(f.version) !== f.fingerprint);
    this.folders = folders;
    for (const version of this.failures.keys())
      if (!this.folder(version)) this.failures.delete(version);
    return changed;
  }

  /** Nothing on disk, nothing loaded: the scene is gone. */
  get gone(): boolean {
    return this.folders.length === 0 && this.loads.length === 0;
  }

  listing(): SceneListing {
    const names = new Set([
      ...this.folders.map((f) => f.version),
      ...this.loads.map((l) => l.version),
    ]);
    const versions: VersionListing[] = [];
    for (const version of [...names].sort(naturalOrder).reverse()) {
      const loads = this.loads.filter((l) => l.version === version);
      for (const load of loads.sort((a, b) => b.generation - a.generation))
        versions.push(loadRow(load));
      const folder = this.folder(version);
      if (!folder) continue;
      const failure = this.failures.get(version);
      if (!folder.complete) {
        versions.push(folderRow(folder, 'incomplete', [{ message: folder.incomplete ?? '' }]));
      } else if (failure?.fingerprint === folder.fingerprint) {
        versions.push({
          ...folderRow(folder, 'failed', failure.reasons),
          failedAt: new Date(failure.at).toISOString(),
        });
      } else if (!loads.some((l) => l.fingerprint === folder.fingerprint)) {
        versions.push(folderRow(folder, 'available', []));
      }
    }
    return { scene: this.name, stable: this.stable?.version ?? null, versions };
  }
}

function loadRow(load: LoadedVersion): VersionListing {
  return {
    version: load.version,
    state: load.state,
    generation: load.generation,
    reasons: [],
    inFlight: load.inFlight,
    ...(load.loadedAt !== undefined && { loadedAt: new Date(load.loadedAt).toISOString() }),
    ...(load.servingSince !== undefined && {
      servingSince: new Date(load.servingSince).toISOString(),
    }),
    dir: load.dir,
  };
}

function folderRow(
  folder: VersionFolder,
  state: VersionListing['state'],
  reasons: ErrorDetail[],
): VersionListing {
  return { version: folder.version, state, reasons, inFlight: 0, dir: folder.dir };
}
