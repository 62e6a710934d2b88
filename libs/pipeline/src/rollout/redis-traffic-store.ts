import type { Cluster, Redis } from 'ioredis';
import { TrafficConflictError, TrafficStoreUnavailableError } from './traffic-errors';
import { TrafficStore } from './traffic-store';

/**
 * Sets or clears the override and advances the revision in one step, unless an expected
 * revision is given and is not the current one. The record's JSON comes without its revision,
 * which the script puts first (as `withRevision` does): no JSON is decoded in Lua.
 */
const CHANGE = `
local current = tonumber(redis.call('GET', KEYS[2]) or '0')
if ARGV[1] ~= '' and tonumber(ARGV[1]) ~= current then return {0, current} end
local revision = redis.call('INCR', KEYS[2])
if ARGV[2] == '' then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], '{"revision":' .. revision .. ',' .. string.sub(ARGV[2], 2))
end
return {1, revision}
`;

/**
 * Traffic overrides in Redis, standalone or Cluster: `<prefix>traffic:{<scene>}:override` holds
 * the JSON record, `<prefix>traffic:{<scene>}:revision` counts every change. The hash tag keeps
 * both keys of a scene on one Cluster slot, as the script needs. A Redis that cannot be reached
 * fails the call with TrafficStoreUnavailableError (503) and changes nothing.
 */
export class RedisTrafficStore extends TrafficStore {
  private readonly prefix: string;

  constructor(
    private readonly redis: Redis | Cluster,
    { prefix = 'ranker:', now }: { prefix?: string; now?: () => Date } = {},
  ) {
    super(now);
    this.prefix = prefix;
  }

  protected async load(scene: string): Promise<{ revision: number; text: string | null }> {
    const [text, revision] = await this.call(() =>
      this.redis.mget(this.key(scene, 'override'), this.key(scene, 'revision')),
    );
    return { revision: Number(revision ?? 0), text };
  }

  protected async change(scene: string, json: string, expected?: number): Promise<number> {
    const keys = [this.key(scene, 'override'), this.key(scene, 'revision')];
    const [done, revision] = (await this.call(() =>
      this.redis.eval(CHANGE, 2, ...keys, expected === undefined ? '' : String(expected), json),
    )) as [number, number];
    if (!done) throw new TrafficConflictError(scene, expected ?? 0, revision);
    return revision;
  }

  private key(scene: string, what: 'override' | 'revision'): string {
    return `${this.prefix}traffic:{${scene}}:${what}`;
  }

  private async call<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (error) {
      throw new TrafficStoreUnavailableError(
        `traffic overrides unavailable: redis: ${(error as Error).message}`,
      );
    }
  }
}
