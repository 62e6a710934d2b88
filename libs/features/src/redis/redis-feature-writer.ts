import { RankerError } from '@app/common';
import { FeatureEntity, FeatureRow } from '../feature-row';
import { encodeBlob } from './feature-blob';
import { MERGE_IF_NEWER_LUA, MERGE_REFUSED } from './merge-if-newer.lua';
import { RedisClient } from './redis-connection';
import { RedisKeys } from './redis-keys';

type MergingClient = RedisClient & {
  rankerMergeIfNewer(key: string, ts: number, ...fieldTokens: string[]): Promise<number>;
};

/**
 * The stored value of a key cannot take any update (a key of another Redis type, a row that is
 * not a JSON object): retrying cannot help, so the update belongs on the dead-letter topic. The
 * message names the cause and the key; it is the dead letter's `x-dlq-reason`.
 */
export class StoredRowRefusedError extends RankerError {
  readonly code = 'FEATURE_ROW_REFUSED';
  readonly status = 422;

  constructor(
    readonly key: string,
    readonly kind: 'wrong_type' | 'bad_row',
    /** The Redis type of the key (wrong_type), or what is wrong with the stored row (bad_row). */
    readonly detail: string,
  ) {
    super(
      kind === 'wrong_type'
        ? `Redis key ${key} holds a ${detail}, not a string row (WRONGTYPE)`
        : `stored row at Redis key ${key} cannot be merged: ${detail}`,
    );
  }
}

/** Writes feature rows in the documented layout: seeding (plain SET) and timestamped updates. */
export class RedisFeatureWriter {
  private readonly redis: MergingClient;

  constructor(
    redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {
    if (!('rankerMergeIfNewer' in redis))
      redis.defineCommand('rankerMergeIfNewer', { numberOfKeys: 1, lua: MERGE_IF_NEWER_LUA });
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

  /**
   * Merges `fields` into the row if `ts` is newer than the stored `_ts`; true if it wrote. The
   * stored members it does not name stay byte-identical (see MERGE_IF_NEWER_LUA). Throws
   * StoredRowRefusedError when the key can never take an update; any other error is transient.
   */
  async mergeIfNewer(
    entity: FeatureEntity,
    id: string,
    fields: FeatureRow,
    ts: number,
  ): Promise<boolean> {
    const key = this.keys.key(entity, id);
    const tokens: string[] = [];
    for (const name of Object.keys(fields))
      tokens.push(JSON.stringify(name), JSON.stringify(fields[name]));
    try {
      return (await this.redis.rankerMergeIfNewer(key, ts, ...tokens)) === 1;
    } catch (error) {
      throw refusal(key, error) ?? error;
    }
  }
}

function refusal(key: string, error: unknown): StoredRowRefusedError | undefined {
  // A Redis error reply (ioredis ReplyError); our script's prefixes name no other error.
  if (!(error instanceof Error)) return undefined;
  const message = error.message;
  for (const [kind, prefix] of [
    ['wrong_type', MERGE_REFUSED.wrongType],
    ['bad_row', MERGE_REFUSED.badRow],
  ] as const) {
    if (message.startsWith(`${prefix} `))
      return new StoredRowRefusedError(key, kind, message.slice(prefix.length + 1));
  }
  return undefined;
}
