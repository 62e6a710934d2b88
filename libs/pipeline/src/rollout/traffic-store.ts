import { ErrorDetail } from '@app/common';
import { Logger } from '@nestjs/common';
import { TrafficInvalidError } from './traffic-errors';
import { parseTrafficConfig } from './traffic-schema';

/** A run-time override of a scene's traffic config, as stored. */
export interface TrafficOverride {
  scene: string;
  /** The store's revision of the scene when this override was written. */
  revision: number;
  /**
   * The traffic config (the JSON form of traffic.yaml), validated when written; every replica
   * validates it again against its own versions (`resolveTraffic`).
   */
  config: unknown;
  /** Who wrote it: an admin's name, or `guardrail` for an automatic rollback. */
  by: string;
  /** ISO time it was written. */
  at: string;
  reason?: string;
  /** sha256 of the scene's traffic.yaml when the override was written; absent if it had none. */
  fileDigest?: string;
}

/** A scene's override state: every set and every clear advances its revision. */
export interface TrafficOverrideState {
  /** 0 for a scene never overridden. */
  revision: number;
  override?: TrafficOverride;
  /** The override key holds something that is not a readable override (written by hand?). */
  errors?: ErrorDetail[];
}

export interface TrafficSetOptions {
  /** The scene's versions: the override is validated against them, exactly as traffic.yaml is. */
  versions: Iterable<string>;
  by: string;
  reason?: string;
  /** Refuse (TrafficConflictError) unless the scene is still at this revision. */
  expectedRevision?: number;
  /** The digest of traffic.yaml (TrafficFile.digest) the change was made against. */
  fileDigest?: string;
}

export type TrafficChangeListener = (scene: string, state: TrafficOverrideState) => void;

/** Scene names as bundles have them: safe inside a Redis Cluster hash tag. */
const SCENE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const MAX_BY = 200;

/**
 * The port of run-time traffic overrides: each scene's override of its traffic.yaml, with a
 * revision that every set and every clear advances, and who changed it and when. Overrides are
 * validated exactly like traffic.yaml before they are written, and the override wins over
 * traffic.yaml until it is cleared (see `resolveTraffic`). RedisTrafficStore shares them between
 * replicas and across restarts; InMemoryTrafficStore serves a single process without Redis.
 *
 * The store does not broadcast. `set` and `clear` tell this replica's `onChange` listeners at
 * once; other replicas learn of a change by calling `reload` when the broadcast reaches them, and
 * on their regular poll in case they missed it. `reload` reports each scene whose revision moved.
 */
export abstract class TrafficStore {
  private readonly logger = new Logger(TrafficStore.name);
  private readonly known = new Map<string, TrafficOverrideState>();
  private readonly listeners = new Set<TrafficChangeListener>();

  constructor(private readonly now: () => Date = () => new Date()) {}

  /** The scene's stored override record (JSON) and revision. */
  protected abstract load(scene: string): Promise<{ revision: number; text: string | null }>;

  /**
   * Atomically: unless `expected` is given and is not the scene's revision, advance the revision
   * and store `json` (the record without its revision, which goes first) or, for '', remove the
   * override. Returns the new revision; throws TrafficConflictError on a stale `expected`.
   */
  protected abstract change(scene: string, json: string, expected?: number): Promise<number>;

  /** The scene's override state as last read or written here; undefined before that. */
  current(scene: string): TrafficOverrideState | undefined {
    return this.known.get(scene);
  }

  /** Reads the scene's override state from the store (without telling listeners). */
  async read(scene: string): Promise<TrafficOverrideState> {
    checkScene(scene);
    const { revision, text } = await this.load(scene);
    return parseState(scene, revision, text);
  }

  /**
   * Validates `raw` (a traffic config in its JSON form) against `versions` and makes it the
   * scene's override. Throws TrafficInvalidError (422, every problem with its path),
   * TrafficConflictError (409) when `expectedRevision` is stale, or
   * TrafficStoreUnavailableError (503) when the store cannot be reached; nothing changes then.
   */
  async set(scene: string, raw: unknown, options: TrafficSetOptions): Promise<TrafficOverride> {
    checkScene(scene);
    if (typeof options.by !== 'string' || options.by === '' || options.by.length > MAX_BY)
      throw new TrafficInvalidError(`override of scene '${scene}'`, [
        { path: 'by', message: `must name who changes traffic (1-${MAX_BY} characters)` },
      ]);
    const config = parseTrafficConfig(raw, options.versions, `override of scene '${scene}'`);
    const record = {
      scene,
      config,
      by: options.by,
      at: this.now().toISOString(),
      ...(options.reason !== undefined && { reason: options.reason }),
      ...(options.fileDigest !== undefined && { fileDigest: options.fileDigest }),
    };
    const revision = await this.change(scene, JSON.stringify(record), options.expectedRevision);
    const override: TrafficOverride = { revision, ...record };
    this.learn(scene, { revision, override });
    return override;
  }

  /** Removes the scene's override, so traffic.yaml is in force again; returns the new revision. */
  async clear(scene: string, options: { expectedRevision?: number } = {}): Promise<number> {
    checkScene(scene);
    const revision = await this.change(scene, '', options.expectedRevision);
    this.learn(scene, { revision });
    return revision;
  }

  /** Reads the scenes again and tells listeners of each one whose revision moved. */
  async reload(...scenes: string[]): Promise<void> {
    const states = await Promise.all(scenes.map((scene) => this.read(scene)));
    scenes.forEach((scene, i) => {
      if (this.known.get(scene)?.revision !== states[i].revision) this.learn(scene, states[i]);
    });
  }

  /** Calls `listener` after each change this replica makes or reloads; returns its removal. */
  onChange(listener: TrafficChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private learn(scene: string, state: TrafficOverrideState): void {
    this.known.set(scene, state);
    for (const listener of this.listeners) {
      try {
        listener(scene, state);
      } catch (error) {
        // One listener's bug must not keep the others (or the caller) from the change.
        this.logger.error(`traffic listener failed for scene ${scene}: ${(error as Error).stack}`);
      }
    }
  }
}

function checkScene(scene: string): void {
  if (!SCENE.test(scene))
    throw new TrafficInvalidError(`scene '${scene}'`, [
      { path: 'scene', message: `must match ${SCENE}` },
    ]);
}

/** The stored record, checked field by field: the key may have been written by anything. */
function parseState(scene: string, revision: number, text: string | null): TrafficOverrideState {
  if (text === null) return { revision };
  const refuse = (message: string): TrafficOverrideState => ({
    revision,
    errors: [{ path: 'override', message }],
  });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return refuse('is not JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return refuse('is not a JSON object');
  const r = value as Record<string, unknown>;
  const text_ = (key: string) => typeof r[key] === 'string';
  if (!Number.isInteger(r.revision) || !text_('by') || !text_('at') || r.config === undefined)
    return refuse('lacks revision, by, at or config');
  if (r.scene !== scene) return refuse(`belongs to scene ${JSON.stringify(r.scene)}`);
  const override: TrafficOverride = {
    scene,
    revision: r.revision as number,
    config: r.config,
    by: r.by as string,
    at: r.at as string,
  };
  if (text_('reason')) override.reason = r.reason as string;
  if (text_('fileDigest')) override.fileDigest = r.fileDigest as string;
  return { revision, override };
}
