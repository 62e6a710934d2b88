/**
 * Features in Redis for a benchmark run: the demo feature file written under a key prefix of the
 * run's own (the Redis server is shared), with the writer `npm run features:load` uses, and
 * deleted again at the end (only keys under that prefix).
 */
import { Logger } from '@nestjs/common';
import { FeaturesConfig } from '@app/features';
import {
  connectRedis,
  readFeatureFile,
  RedisFeatureWriter,
  RedisKeys,
} from '@app/features/testing';
import Redis from 'ioredis';

export interface SeededFeatures {
  prefix: string;
  rows: number;
  remove(): Promise<number>;
}

export async function seedFeatures(
  file: string,
  prefix: string,
  redisUrl: string,
): Promise<SeededFeatures> {
  const config = Object.assign(new FeaturesConfig(), {
    REDIS_URL: redisUrl,
    FEATURES_REDIS_KEY_PREFIX: prefix,
  });
  const redis = await connectRedis(config, new Logger('bench:rank'));
  if (!(redis instanceof Redis)) throw new Error('bench:rank seeds a standalone Redis only');
  await redis.ping().catch((error: Error) => {
    redis.disconnect();
    throw new Error(`no Redis answers at ${redisUrl} (npm run services:up): ${error.message}`, {
      cause: error,
    });
  });
  const writer = new RedisFeatureWriter(redis, new RedisKeys(prefix, 0));
  const rows = await writer.putRows(await readFeatureFile(file));
  return {
    prefix,
    rows,
    async remove() {
      let removed = 0;
      for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 1000 })) {
        if ((keys as string[]).length > 0) removed += await redis.del(...(keys as string[]));
      }
      await redis.quit();
      return removed;
    },
  };
}
