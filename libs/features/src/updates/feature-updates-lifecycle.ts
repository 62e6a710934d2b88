import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import {
  createKafkaClient,
  ensureTopics,
  KafkaConfig,
  RestartingConsumer,
  succeedOnce,
} from '@app/common';
import { ConsumerConfig, Kafka, Partitioners, Producer } from 'kafkajs';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { ItemCache } from '../cache/item-cache';
import { FeaturesMetrics } from '../features.metrics';
import { REDIS_CLIENT } from '../features.tokens';
import { RedisClient } from '../redis/redis-connection';
import { RedisFeatureWriter } from '../redis/redis-feature-writer';
import { RedisKeys } from '../redis/redis-keys';
import { FeatureCacheRefresher } from './feature-cache-refresher';
import { FeatureUpdatesConfig } from './feature-updates.config';
import { FeatureUpdateWriter } from './feature-update-writer';

/** An idle fetch returns after 500 ms, which also bounds how long a stopping consumer waits. */
const CONSUMER_DEFAULTS: Omit<ConsumerConfig, 'groupId'> = {
  maxWaitTimeInMs: 500,
  retry: { retries: 8, initialRetryTime: 300, maxRetryTime: 10_000 },
};

/**
 * Real-time feature updates (Redis store with FEATURE_UPDATES_ENABLED only). Two consumers per
 * replica: the writer, in a group shared by all replicas, writes each update to Redis once; the
 * cache refresher, in a group of its own, refreshes this replica's item cache from every update
 * published after it started (older history is already in Redis). Both start in the background, so
 * a broker that is down at boot delays updates, never serving.
 */
@Injectable()
export class FeatureUpdatesLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(FeatureUpdatesLifecycle.name);
  private readonly consumers: RestartingConsumer[] = [];
  private producer?: Producer;
  /** Names this process among the replicas: its cache refresher's group ends with it. */
  readonly replicaId = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;

  constructor(
    private readonly config: FeatureUpdatesConfig,
    private readonly kafkaConfig: KafkaConfig,
    @Inject(REDIS_CLIENT) private readonly redis: RedisClient | null,
    private readonly keys: RedisKeys,
    private readonly cache: ItemCache,
    private readonly metrics: FeaturesMetrics,
  ) {}

  /** True once both consumers read the topic (anything published from then on is applied). */
  get consuming(): boolean {
    return this.consumers.length > 0 && this.consumers.every((c) => c.consuming);
  }

  get cacheGroupId(): string {
    return `${this.config.FEATURE_UPDATES_CACHE_GROUP_PREFIX}-${this.replicaId}`;
  }

  onApplicationBootstrap(): void {
    if (!this.config.FEATURE_UPDATES_ENABLED) return;
    if (!this.redis) {
      this.logger.warn('FEATURE_UPDATES_ENABLED has no effect with FEATURE_STORE=memory');
      return;
    }
    const { KAFKA_CLIENT_ID } = this.kafkaConfig;
    const kafka = createKafkaClient(this.kafkaConfig, `${KAFKA_CLIENT_ID}-features`);
    const { FEATURE_UPDATES_TOPIC: topic, FEATURE_UPDATES_DLQ_TOPIC: dlqTopic } = this.config;
    const topicsReady = succeedOnce(async () => {
      const created = await ensureTopics(kafka, [topic, dlqTopic]);
      if (created.length > 0) this.logger.log(`created topics ${created.join(', ')}`);
    });
    this.consumers.push(
      this.writer(kafka, this.redis, topicsReady),
      this.cacheRefresher(kafka, topicsReady),
    );
    for (const consumer of this.consumers) consumer.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    // Before Redis closes (RedisLifecycle, on application shutdown), so in-flight writes finish.
    await Promise.all(this.consumers.map((consumer) => consumer.stop()));
    await this.producer?.disconnect().catch((error: Error) => {
      this.logger.warn(`producer disconnect failed: ${error.message}`);
    });
  }

  private writer(
    kafka: Kafka,
    redis: RedisClient,
    topicsReady: () => Promise<void>,
  ): RestartingConsumer {
    const producer = kafka.producer({
      createPartitioner: Partitioners.DefaultPartitioner,
      allowAutoTopicCreation: false,
    });
    this.producer = producer;
    const producerReady = succeedOnce(() => producer.connect());
    const dlqTopic = this.config.FEATURE_UPDATES_DLQ_TOPIC;
    const writer = new FeatureUpdateWriter(
      new RedisFeatureWriter(redis, this.keys),
      async (messages) => {
        await producer.send({ topic: dlqTopic, acks: -1, messages });
      },
      this.metrics,
    );
    return new RestartingConsumer(kafka, {
      name: 'feature writer',
      whileDown: 'features are still served',
      topic: this.config.FEATURE_UPDATES_TOPIC,
      consumer: { ...CONSUMER_DEFAULTS, groupId: this.config.FEATURE_UPDATES_WRITER_GROUP },
      // A new shared group writes what the topic still holds: replays are stale, never harmful.
      fromBeginning: true,
      prepare: async () => {
        await topicsReady();
        await producerReady();
      },
      run: { autoCommit: true, eachBatchAutoResolve: false, eachBatch: writer.eachBatch },
    });
  }

  private cacheRefresher(kafka: Kafka, topicsReady: () => Promise<void>): RestartingConsumer {
    const refresher = new FeatureCacheRefresher(this.cache, this.metrics);
    return new RestartingConsumer(kafka, {
      name: 'feature cache refresher',
      whileDown: 'features are still served',
      topic: this.config.FEATURE_UPDATES_TOPIC,
      consumer: { ...CONSUMER_DEFAULTS, groupId: this.cacheGroupId },
      fromBeginning: false,
      prepare: topicsReady,
      // Nothing committed: the group is this process's alone and is dropped once it is empty.
      run: { autoCommit: false, eachBatch: refresher.eachBatch },
      // Every (re)join starts at the topic's end: updates published before it were not seen here,
      // so rows cached before it may be stale.
      onPositioned: () => {
        if (this.cache.size > 0)
          this.logger.log(`item cache cleared (${this.cache.size} rows) on a new topic position`);
        this.cache.clear();
      },
    });
  }
}
