import { TrafficConflictError } from './traffic-errors';
import { TrafficStore } from './traffic-store';

/**
 * Traffic overrides in this process only, for a single replica without Redis (the embedded
 * defaults): same rules, revisions and records as RedisTrafficStore, but lost on restart.
 */
export class InMemoryTrafficStore extends TrafficStore {
  private readonly scenes = new Map<string, { revision: number; text: string | null }>();

  protected async load(scene: string): Promise<{ revision: number; text: string | null }> {
    return { ...(this.scenes.get(scene) ?? { revision: 0, text: null }) };
  }

  protected async change(scene: string, json: string, expected?: number): Promise<number> {
    const current = this.scenes.get(scene)?.revision ?? 0;
    if (expected !== undefined && expected !== current)
      throw new TrafficConflictError(scene, expected, current);
    const revision = current + 1;
    this.scenes.set(scene, { revision, text: json === '' ? null : withRevision(json, revision) });
    return revision;
  }
}

/** The record JSON with its revision put first, as RedisTrafficStore's script stores it. */
const withRevision = (json: string, revision: number): string =>
  `{"revision":${revision},${json.slice(1)}`;
