import { Logger, Module } from '@nestjs/common';
import { typedConfigProvider } from '@app/common';
import { resolve } from 'node:path';
import { ItemCache } from './cache/item-cache';
import { readFeatureFile } from './feature-file';
import { FeatureStore } from './feature-store.port';
import { FeaturesConfig } from './features.config';
import { FeaturesMetrics } from './features.metrics';
import { REDIS_CLIENT } from './features.tokens';
import { InMemoryFeatureStore } from './in-memory-feature-store';
import { connectRedis, RedisClient } from './redis/redis-connection';
import { RedisFeatureStore } from './redis/redis-feature-store';
import { RedisKeys } from './redis/redis-keys';
import { RedisLifecycle } from './redis/redis-lifecycle';

const logger = new Logger('FeaturesModule');

@Module({
  providers: [
    typedConfigProvider(FeaturesConfig),
    FeaturesMetrics,
    {
      provide: REDIS_CLIENT,
      inject: [FeaturesConfig],
      useFactory: (config: FeaturesConfig) =>
        config.FEATURE_STORE === 'redis' ? connectRedis(config, logger) : null,
    },
    RedisLifecycle,
    {
      provide: RedisKeys,
      inject: [FeaturesConfig],
      useFactory: (config: FeaturesConfig) =>
        new RedisKeys(config.FEATURES_REDIS_KEY_PREFIX, config.FEATURES_REDIS_SLOT_BUCKETS),
    },
    {
      provide: ItemCache,
      inject: [FeaturesConfig, FeaturesMetrics],
      useFactory: (config: FeaturesConfig, metrics: FeaturesMetrics) => {
        const cache = new ItemCache(
          {
            maxEntries: config.ITEM_CACHE_MAX_ENTRIES,
            maxBytes: config.ITEM_CACHE_MAX_BYTES,
            ttlMs: config.ITEM_CACHE_TTL_MS,
            maxNegativeEntries: config.ITEM_CACHE_MAX_NEGATIVE_ENTRIES,
          },
          () => metrics.cacheEvictions.inc(),
        );
        metrics.watchCache(cache);
        return cache;
      },
    },
    {
      provide: FeatureStore,
      inject: [FeaturesConfig, REDIS_CLIENT, RedisKeys, ItemCache, FeaturesMetrics],
      useFactory: async (
        config: FeaturesConfig,
        redis: RedisClient | null,
        keys: RedisKeys,
        cache: ItemCache,
        metrics: FeaturesMetrics,
      ): Promise<FeatureStore> => {
        if (redis)
          return new RedisFeatureStore(
            redis,
            keys,
            cache,
            config.FEATURES_FETCH_TIMEOUT_MS,
            metrics,
          );
        const file = resolve(config.FEATURES_SEED_FILE);
        const store = new InMemoryFeatureStore(await readFeatureFile(file));
        const { users, items } = store.size;
        logger.log(`in-memory feature store: ${users} users, ${items} items from ${file}`);
        return store;
      },
    },
  ],
  exports: [FeatureStore, FeaturesMetrics, FeaturesConfig, ItemCache, RedisKeys, REDIS_CLIENT],
})
export class FeaturesModule {}
