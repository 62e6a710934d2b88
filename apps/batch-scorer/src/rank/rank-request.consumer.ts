import {
  BeforeApplicationShutdown,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import {
  AdmissionGate,
  BatchingProducer,
  ConcurrentBatchHandler,
  createKafkaClient,
  ensureTopics,
  KafkaConfig,
  RankerError,
  RenewingProducer,
  RestartingConsumer,
  succeedOnce,
} from '@app/common';
import { SceneRegistry, SceneTrafficControl } from '@app/pipeline';
import { ScoringEngine } from '@app/scoring';
import { Partitioners } from 'kafkajs';
import { setTimeout as sleep } from 'node:timers/promises';
import { BatchScorerConfig } from '../batch-scorer.config';
import { BatchScorerMetrics } from '../batch-scorer.metrics';
import { RankMessageHandler } from './rank-message.handler';

/** Bytes of results and dead letters per produce request (well under a topic's 1 MB default). */
const PRODUCE_BATCH_BYTES = 512 * 1024;

/**
 * The worker's Kafka side. Once the bundles are loaded it joins BATCH_SCORER_GROUP_ID on
 * BATCH_INPUT_TOPIC (a new group starts at the oldest retained request) and hands each fetched
 * batch to a ConcurrentBatchHandler: requests of all its partitions are ranked concurrently as the
 * admission gate lets them (in-flight limits, and a pause while the engine's queue is nearly
 * full), results go out through one idempotent producer, and an offset is committed only once the
 * results of its message and of every earlier one are acknowledged. With no bundle serving it
 * never joins, so a misconfigured worker cannot dead-letter the stream. On SIGTERM it stops
 * fetching, finishes and produces what is in flight, commits and leaves the group, within
 * BATCH_SHUTDOWN_GRACE_MS; what is unfinished then stays uncommitted for the next owner.
 */
@Injectable()
export class RankRequestConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(RankRequestConsumer.name);
  private consumer?: RestartingConsumer;
  private handler?: ConcurrentBatchHandler;
  private gate?: AdmissionGate;
  private producer?: RenewingProducer;
  private batching?: BatchingProducer;
  private starting?: Promise<void>;
  private stopping = false;

  constructor(
    private readonly config: BatchScorerConfig,
    private readonly kafkaConfig: KafkaConfig,
    private readonly registry: SceneRegistry,
    private readonly engine: ScoringEngine,
    private readonly messages: RankMessageHandler,
    private readonly metrics: BatchScorerMetrics,
    private readonly traffic: SceneTrafficControl,
  ) {}

  /** Joined the group and fetched: ready. */
  get consuming(): boolean {
    return this.consumer?.consuming ?? false;
  }

  onApplicationBootstrap(): void {
    this.starting = this.start().catch((error: Error) => {
      this.logger.error(`cannot start consuming: ${error.stack ?? error.message}`);
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.starting;
    if (!this.consumer) return;
    const grace = this.config.BATCH_SHUTDOWN_GRACE_MS;
    const started = performance.now();
    this.handler?.stop();
    const stopped = this.consumer.stop().then(() => true);
    if (await Promise.race([stopped, sleep(grace, false, { ref: false })])) {
      this.logger.log(
        `stopped: in-flight requests finished, committed, left the group (${Math.round(performance.now() - started)} ms)`,
      );
    } else {
      this.logger.warn(
        `grace period (${grace} ms) over with ${this.gate?.inFlightRequests ?? 0} request(s) in ` +
          'flight: their offsets stay uncommitted and the group ranks them again',
      );
    }
    this.batching?.close();
    await Promise.race([this.producer?.disconnect(), sleep(1000, undefined, { ref: false })]);
  }

  private async start(): Promise<void> {
    // The first fetch waits for each scene's traffic too: a pinned stable serves from the start.
    await this.registry.whenLoaded();
    await this.traffic.whenApplied();
    if (this.stopping) return;
    if (!this.registry.ready) {
      this.logger.error(
        'no scene serves (see the bundle errors above): not joining the group, so no request is ' +
          'dead-lettered for this worker’s own configuration',
      );
      return;
    }
    const c = this.config;
    const kafka = createKafkaClient(
      this.kafkaConfig,
      `${this.kafkaConfig.KAFKA_CLIENT_ID}-batch-scorer`,
    );
    const producer = new RenewingProducer(() =>
      kafka.producer({
        idempotent: true,
        createPartitioner: Partitioners.DefaultPartitioner,
        allowAutoTopicCreation: false,
        // kafkajs's rule for an idempotent producer; shutdown is bounded by the grace period.
        retry: { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: 300, maxRetryTime: 5000 },
      }),
    );
    this.producer = producer;
    this.batching = new BatchingProducer({
      send: (topicMessages) => {
        this.metrics.produceRequests.inc();
        for (const { messages } of topicMessages) this.metrics.producedRecords.inc(messages.length);
        return producer.sendBatch(topicMessages);
      },
      maxBatchBytes: PRODUCE_BATCH_BYTES,
      lingerMs: c.BATCH_PRODUCE_LINGER_MS,
      refused: this.messages.replaceRefused,
      retrying: (error, attempt) => {
        this.metrics.produceRetries.inc();
        this.logger.warn(`producing results failed (${error.message}); retry ${attempt}`);
      },
    });
    this.gate = new AdmissionGate(
      {
        maxRequests: c.BATCH_MAX_IN_FLIGHT,
        maxRows: c.BATCH_MAX_IN_FLIGHT_ROWS,
        pauseAt: c.BATCH_PAUSE_AT_QUEUE_FILL,
        resumeAt: c.BATCH_RESUME_AT_QUEUE_FILL,
      },
      () => this.engine.queueDepth(),
      {
        paused: (fill) => this.flow('pause', fill),
        resumed: (fill) => this.flow('resume', fill),
      },
    );
    this.metrics.watch(this.gate);
    this.handler = new ConcurrentBatchHandler({
      handler: this.messages.handle,
      gate: this.gate,
      producer: this.batching,
      events: {
        lag: (topic, partition, lag) => this.metrics.setLag(topic, partition, lag),
        retried: (error) =>
          this.metrics.retries.inc({
            code: error instanceof RankerError ? error.code : 'INTERNAL',
          }),
      },
    });
    const topics = [c.BATCH_INPUT_TOPIC, c.BATCH_OUTPUT_TOPIC, c.BATCH_DLQ_TOPIC];
    const topicsReady = succeedOnce(async () => {
      const created = await ensureTopics(kafka, topics);
      if (created.length > 0) this.logger.log(`created topics ${created.join(', ')}`);
    });
    const producerReady = succeedOnce(() => producer.connect());
    this.consumer = new RestartingConsumer(kafka, {
      name: 'rank requests',
      topic: c.BATCH_INPUT_TOPIC,
      consumer: {
        groupId: c.BATCH_SCORER_GROUP_ID,
        sessionTimeout: c.BATCH_SESSION_TIMEOUT_MS,
        heartbeatInterval: Math.min(3000, Math.floor(c.BATCH_SESSION_TIMEOUT_MS / 3)),
        maxBytes: c.BATCH_FETCH_MAX_BYTES,
        maxBytesPerPartition: Math.min(
          c.BATCH_FETCH_MAX_BYTES_PER_PARTITION,
          c.BATCH_FETCH_MAX_BYTES,
        ),
        // An idle fetch returns after this, which also bounds how long a stopping consumer waits.
        maxWaitTimeInMs: 500,
        retry: { retries: 8, initialRetryTime: 300, maxRetryTime: 10_000 },
      },
      // The input is a queue of work: a new group ranks what the topic still holds.
      fromBeginning: true,
      prepare: async () => {
        await topicsReady();
        await producerReady();
      },
      onGroupJoin: (assignment) => {
        const partitions = assignment[c.BATCH_INPUT_TOPIC] ?? [];
        this.metrics.keepLagOf(c.BATCH_INPUT_TOPIC, partitions);
        this.logger.log(`owns ${c.BATCH_INPUT_TOPIC} partitions [${partitions.join(', ')}]`);
        // A new member starts unpaused: pause it again if the engine is still full.
        if (this.gate?.paused) this.consumer?.pause(c.BATCH_INPUT_TOPIC);
      },
      run: {
        autoCommit: true,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: c.BATCH_CONCURRENT_PARTITIONS,
        eachBatch: this.handler.eachBatch,
      },
    });
    if (this.stopping) return;
    this.consumer.start();
  }

  private flow(event: 'pause' | 'resume', fill: number): void {
    this.metrics.flowControl.inc({ event });
    const topic = this.config.BATCH_INPUT_TOPIC;
    if (event === 'pause') this.consumer?.pause(topic);
    else this.consumer?.resume(topic);
    // Counted in ranker_batch_flow_control_total; a line each would flood the log under load.
    this.logger.debug(
      `${event === 'pause' ? 'paused' : 'resumed'} ${topic}: engine queue ${Math.round(fill * 100)}% full`,
    );
  }
}
