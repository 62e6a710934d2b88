import { ErrorDetail } from '@app/common';
import { Scene } from '../scene/scene';
import { VersionState } from './loaded-version';

/** One row of the admin list: a version folder, or one load of a version. */
export interface VersionListing {
  version: string;
  state: VersionState;
  /** Which load of the version in this process; absent for a folder that is not loaded. */
  generation?: number;
  /** Why it failed or is incomplete: every problem, with its YAML path where it has one. */
  reasons: ErrorDetail[];
  /** Requests running on it now. */
  inFlight: number;
  /** ISO times. */
  loadedAt?: string;
  servingSince?: string;
  failedAt?: string;
  dir: string;
}

export interface SceneListing {
  scene: string;
  /** The version requests get by default; null while none is valid. */
  stable: string | null;
  /** Newest first. */
  versions: VersionListing[];
}

/** A version held for one request; `release()` exactly once when the request has answered. */
export interface SceneLease {
  readonly scene: Scene;
  release(): void;
}

/** What asked for a scan: the boot, the poll timer, the admin API, another replica. */
export type ReloadOrigin = 'boot' | 'poll' | 'admin' | 'broadcast';

/** Sent to the other replicas when this one saw a change or was asked to reload. */
export interface ReloadNotice {
  /** One scene, or every scene when absent. */
  scene?: string;
  /** Load again versions that failed, even if their files did not change. */
  retryFailed: boolean;
}

/**
 * Which versions of a scene the rollout wants (set by the traffic configuration). Without one,
 * the stable version is the newest valid version and nothing else stays loaded.
 */
export interface VersionPolicy {
  /** Pin the stable version (a rollback); if it cannot serve, the newest valid one does. */
  stable?: string;
  /** Versions to keep loaded and valid beside the stable one (canary, A/B arms, shadow). */
  keep?: readonly string[];
}

/** Every version with a complete folder or a load: what a traffic config may name. */
export function nameableVersions(listing: Pick<SceneListing, 'versions'>): string[] {
  return [
    ...new Set(listing.versions.filter((v) => v.state !== 'incomplete').map((v) => v.version)),
  ];
}

/** The newest version neither failed nor incomplete, else the stable one; null when none. */
export function newestValidVersion(listing: SceneListing): string | null {
  return (
    listing.versions.find((v) => v.state !== 'failed' && v.state !== 'incomplete')?.version ??
    listing.stable
  );
}
