/**
 * npm run features:load -- [file] [--redis redis://host:port | --cluster host:port,...]
 *   [--prefix rk:] [--slot-buckets N]
 * Writes a JSON-lines feature file (default models/demo/features.jsonl) into Redis in the
 * layout the service reads: one JSON blob per entity under <prefix><entity>:<id>.
 */
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { FeaturesConfig } from '@app/features';
import {
  connectRedis,
  readFeatureFile,
  RedisFeatureWriter,
  RedisKeys,
} from '@app/features/testing';
import { resolve } from 'node:path';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const option = (name: string) => {
    const at = args.indexOf(name);
    return at >= 0 ? args.splice(at, 2)[1] : undefined;
  };
  const config = Object.assign(new FeaturesConfig(), {
    REDIS_URL: option('--redis') ?? 'redis://127.0.0.1:6379',
    REDIS_CLUSTER_NODES: option('--cluster') ?? '',
    FEATURES_REDIS_KEY_PREFIX: option('--prefix') ?? 'rk:',
    FEATURES_REDIS_SLOT_BUCKETS: Number(option('--slot-buckets') ?? 0),
  });
  const file = resolve(args[0] ?? 'models/demo/features.jsonl');
  const redis = await connectRedis(config, new Logger('load-features'));
  const writer = new RedisFeatureWriter(
    redis,
    new RedisKeys(config.FEATURES_REDIS_KEY_PREFIX, config.FEATURES_REDIS_SLOT_BUCKETS),
  );
  const written = await writer.putRows(await readFeatureFile(file));
  console.log(`wrote ${written} rows from ${file}`);
  await redis.quit();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
