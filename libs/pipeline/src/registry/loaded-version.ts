import { Scene } from '../scene/scene';

/**
 * Where a version stands. `incomplete`, `available` and `failed` describe folders on disk; the
 * others a load of it in this process:
 * - `loading`: the gate runs (schema, model files into workers with their warm-up, model
 *   contract, dry run, golden scores);
 * - `warming`: valid; scoring synthetic requests so its first real ones are not cold;
 * - `ready`: loaded and valid, kept for the rollout (canary, A/B arm, shadow), not the stable one;
 * - `serving`: the scene's stable version: requests without another assignment get it;
 * - `draining`: no longer wanted; new requests never get it, and its models are released once
 *   the requests that started on it have finished.
 */
export type VersionState =
  'incomplete' | 'available' | 'loading' | 'warming' | 'ready' | 'serving' | 'draining' | 'failed';

/**
 * One load of one version, with its in-flight requests. A request holds a lease from the moment
 * it picks the version until it has answered, so a version's models are released only when
 * nobody uses them.
 */
export class LoadedVersion {
  state: VersionState = 'loading';
  scene: Scene | undefined;
  readonly startedAt = Date.now();
  loadedAt: number | undefined;
  servingSince: number | undefined;
  drainingSince: number | undefined;
  private inFlightCount = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(
    readonly sceneName: string,
    readonly version: string,
    /** Which load of this version in this process (engine ids of generation n > 1 carry `#n`). */
    readonly generation: number,
    readonly dir: string,
    /** The folder's fingerprint when the load started. */
    readonly fingerprint: string,
  ) {}

  /** Valid and loaded: may be handed to requests. */
  get usable(): boolean {
    return this.state === 'ready' || this.state === 'serving';
  }

  get inFlight(): number {
    return this.inFlightCount;
  }

  /** Only for the registry, on a usable version. */
  lease(): void {
    this.inFlightCount++;
  }

  release(): void {
    if (--this.inFlightCount > 0) return;
    for (const wake of this.idleWaiters.splice(0)) wake();
  }

  /** Resolves once no request holds this version. */
  whenIdle(): Promise<void> {
    if (this.inFlightCount === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}
