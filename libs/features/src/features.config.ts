import { IsIn, IsInt, IsNotEmpty, Matches, Max, Min } from 'class-validator';

export class FeaturesConfig {
  /** Which FeatureStore adapter serves features. */
  @IsIn(['memory', 'redis'])
  FEATURE_STORE = 'memory';

  /** JSON-lines file that seeds the in-memory store (relative paths are from the working directory). */
  @IsNotEmpty()
  FEATURES_SEED_FILE = 'models/demo/features.jsonl';

  /** Standalone Redis (used unless REDIS_CLUSTER_NODES is set). */
  @Matches(/^rediss?:\/\/\S+$/, { message: 'must be a redis:// or rediss:// URL' })
  REDIS_URL = 'redis://127.0.0.1:6379';

  /** Comma-separated host:port seeds of a Redis Cluster; empty for standalone. */
  @Matches(/^$|^[^\s,:]+:\d+(,[^\s,:]+:\d+)*$/, {
    message: 'must be empty or a comma-separated list of host:port',
  })
  REDIS_CLUSTER_NODES = '';

  @Matches(/^[\w:.-]*$/, { message: 'may only contain letters, digits, _ : . -' })
  FEATURES_REDIS_KEY_PREFIX = 'rk:';

  /**
   * Hash-tag buckets of the key layout (0: none). For a Redis Cluster, 256 bounds a request to
   * 256 MGETs whatever its candidate count; without it every key is its own slot.
   */
  @IsInt()
  @Min(0)
  @Max(16384)
  FEATURES_REDIS_SLOT_BUCKETS = 0;

  /** Per-request wait for Redis; past it, missing rows take their defaults and the answer is degraded. */
  @IsInt()
  @Min(1)
  @Max(10_000)
  FEATURES_FETCH_TIMEOUT_MS = 50;

  @IsInt()
  @Min(0)
  ITEM_CACHE_MAX_ENTRIES = 1_000_000;

  @IsInt()
  @Min(1024)
  ITEM_CACHE_MAX_BYTES = 512 * 1024 * 1024;

  @IsInt()
  @Min(1)
  ITEM_CACHE_TTL_MS = 5 * 60_000;

  /**
   * Ids cached as absent (no row in Redis), in an LRU of their own so a flood of unknown ids
   * cannot evict hot items; 0 caches no absent id.
   */
  @IsInt()
  @Min(0)
  ITEM_CACHE_MAX_NEGATIVE_ENTRIES = 100_000;

  get clusterNodes(): { host: string; port: number }[] {
    if (this.REDIS_CLUSTER_NODES === '') return [];
    return this.REDIS_CLUSTER_NODES.split(',').map((hostPort) => {
      const at = hostPort.lastIndexOf(':');
      return { host: hostPort.slice(0, at), port: Number(hostPort.slice(at + 1)) };
    });
  }
}
