import { Inject, Injectable, Logger, OnApplicationShutdown, Provider } from '@nestjs/common';
import { REDIS_CLIENT } from '@app/features';
import Redis, { Cluster } from 'ioredis';
import { PipelineConfig } from '../pipeline.config';
import { InMemoryTrafficStore } from '../rollout/in-memory-traffic-store';
import { RedisTrafficStore } from '../rollout/redis-traffic-store';
import { TrafficStore } from '../rollout/traffic-store';

/** The Redis that keeps traffic overrides, or null: they live in this process only. */
export const TRAFFIC_REDIS = Symbol('TRAFFIC_REDIS');

const logger = new Logger('TrafficStore');

/**
 * Overrides must be shared by every replica and survive a restart, so they live in a Redis the
 * replicas share: the features Redis when the feature store is Redis (standalone or Cluster, one
 * connection fewer), else the Redis that carries the reload notices
 * (BUNDLES_BROADCAST_REDIS_URL). Without either there is one replica and no Redis: in memory.
 */
export const trafficStoreProviders: Provider[] = [
  {
    provide: TRAFFIC_REDIS,
    inject: [PipelineConfig, REDIS_CLIENT],
    useFactory: (config: PipelineConfig, features: Redis | Cluster | null) => {
      if (features) return features;
      const url = config.BUNDLES_BROADCAST_REDIS_URL;
      if (url === '') return null;
      return new Redis(url, {
        connectTimeout: 2000,
        maxRetriesPerRequest: 1,
        retryStrategy: (attempt: number) => Math.min(100 * attempt, 2000),
      }).on('error', (error: Error) => logger.warn(`redis ${url}: ${error.message}`));
    },
  },
  {
    provide: TrafficStore,
    inject: [PipelineConfig, TRAFFIC_REDIS],
    useFactory: (config: PipelineConfig, redis: Redis | Cluster | null): TrafficStore => {
      if (!redis) {
        logger.log('traffic overrides in memory: this replica only, lost on restart');
        return new InMemoryTrafficStore();
      }
      logger.log(`traffic overrides in redis under ${config.TRAFFIC_REDIS_KEY_PREFIX}traffic:*`);
      return new RedisTrafficStore(redis, { prefix: config.TRAFFIC_REDIS_KEY_PREFIX });
    },
  },
];

/** Closes the traffic Redis connection when it is this lib's own (not the features one). */
@Injectable()
export class TrafficRedisLifecycle implements OnApplicationShutdown {
  constructor(
    @Inject(TRAFFIC_REDIS) private readonly redis: Redis | Cluster | null,
    @Inject(REDIS_CLIENT) private readonly features: Redis | Cluster | null,
  ) {}

  onApplicationShutdown(): void {
    if (this.redis && this.redis !== this.features) this.redis.disconnect();
  }
}
