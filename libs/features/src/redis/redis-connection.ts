import { Logger } from '@nestjs/common';
import Redis, { Cluster } from 'ioredis';
import { FeaturesConfig } from '../features.config';

export type RedisClient = Redis | Cluster;

const RETRY_MS = (attempt: number) => Math.min(100 * attempt, 1000);

/**
 * Connects to Redis standalone or Cluster. Commands are auto-pipelined (all commands of one
 * tick to one node leave in one write) and fail fast while disconnected instead of queueing, so
 * a request never waits on a dead Redis beyond its fetch deadline; reconnection is automatic
 * and endless. A Redis that is down at boot does not stop the service: it starts degraded.
 */
export async function connectRedis(
  config: FeaturesConfig,
  logger: Logger,
  readyWithinMs = 3000,
): Promise<RedisClient> {
  const common = { enableAutoPipelining: true, enableOfflineQueue: false };
  const nodes = config.clusterNodes;
  const client: RedisClient =
    nodes.length > 0
      ? new Redis.Cluster(nodes, {
          ...common,
          clusterRetryStrategy: RETRY_MS,
          slotsRefreshTimeout: 2000,
          redisOptions: { connectTimeout: 2000, maxRetriesPerRequest: 1 },
        })
      : new Redis(config.REDIS_URL, {
          ...common,
          connectTimeout: 2000,
          maxRetriesPerRequest: 1,
          retryStrategy: RETRY_MS,
        });
  const where = nodes.length > 0 ? `cluster ${config.REDIS_CLUSTER_NODES}` : config.REDIS_URL;
  let lastError = '';
  client.on('error', (error: Error) => {
    if (error.message !== lastError) logger.warn(`redis ${where}: ${error.message}`);
    lastError = error.message;
  });
  client.on('ready', () => {
    lastError = '';
    logger.log(`redis ${where}: ready`);
  });
  const ready = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), readyWithinMs);
    client.once('ready', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
  if (!ready)
    logger.warn(
      `redis ${where}: not ready after ${readyWithinMs} ms; serving degraded until it is`,
    );
  return client;
}
