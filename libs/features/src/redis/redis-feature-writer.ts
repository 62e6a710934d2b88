import { FeatureEntity, FeatureRow } from '../feature-row';
import { encodeBlob } from './feature-blob';
import { RedisClient } from './redis-connection';
import { RedisKeys } from './redis-keys';

/**
 * Merges fields into a stored row unless the stored row is as new or newer (`_ts`), in one
 * atomic step on the key's own node (single key, so Cluster-safe). Returns 1 if written.
 */
const MERGE_IF_NEWER = `
local current = redis.call('GET', KEYS[1])
local ts = tonumber(ARGV[2])
local row = {}
if current then
  local ok, decoded = pcall(cjson.decode, current)
  if ok and type(decoded) == 'table' then
    row = decoded
    if (tonumber(row['_ts']) or 0) >= ts then return 0 end
  end
end
for name, value in pairs(cjson.decode(ARGV[1])) do row[name] = value end
row['_ts'] = ts
redis.call('SET', KEYS[1], cjson.encode(row))
return 1
`;

type MergingClient = RedisClient & {
  rankerMergeIfNewer(key: string, fieldsJson: string, ts: number): Promise<number>;
};

/** Writes feature rows in the documented layout: seeding (plain SET) and timestamped updates. */
export class RedisFeatureWriter {
  private readonly redis: MergingClient;

  constructor(
    redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {
    if (!('rankerMergeIfNewer' in redis))
      redis.defineCommand('rankerMergeIfNewer', { numberOfKeys: 1, lua: MERGE_IF_NEWER });
    this.redis = redis as MergingClient;
  }

  /** Replaces whole rows (auto-pipelined: one write per node per tick). */
  async putRows(
    rows: Iterable<{ entity: FeatureEntity; id: string; fields: FeatureRow }>,
    ts = 0,
  ): Promise<number> {
    const writes: Promise<unknown>[] = [];
    for (const { entity, id, fields } of rows)
      writes.push(this.redis.set(this.keys.key(entity, id), encodeBlob(fields, ts)));
    await Promise.all(writes);
    return writes.length;
  }

  /** Merges `fields` into the row if `ts` is newer than the stored `_ts`; true if it wrote. */
  async mergeIfNewer(
    entity: FeatureEntity,
    id: string,
    fields: FeatureRow,
    ts: number,
  ): Promise<boolean> {
    return (
      (await this.redis.rankerMergeIfNewer(
        this.keys.key(entity, id),
        JSON.stringify(fields),
        ts,
      )) === 1
    );
  }
}
