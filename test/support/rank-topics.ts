/**
 * Topics of one batch-scorer spec (or benchmark) run on the real broker: input, output and DLQ
 * with run-unique names, created by the run and deleted at its end, and the clients a caller of
 * the batch scorer would use: a producer of rank requests and a reader of results and dead letters.
 */
import {
  Admin,
  Consumer,
  IHeaders,
  ITopicConfig,
  Kafka,
  logLevel,
  Message,
  Partitioners,
  Producer,
} from 'kafkajs';
import { randomBytes } from 'node:crypto';

/** The broker the specs and benchmarks reach: KAFKA_BROKERS, else the local one. */
export const TEST_BROKER = process.env.KAFKA_BROKERS ?? '127.0.0.1:9092';

export interface ReadRecord {
  key: string;
  value: Buffer | null;
  headers: Record<string, string>;
  /** The key and headers as the broker holds them (binary, null, repeated headers as arrays). */
  rawKey: Buffer | null;
  rawHeaders: IHeaders;
  partition: number;
  offset: string;
}

export interface RankTopicsOptions {
  partitions?: number;
  outputPartitions?: number;
  /** Topic configs, e.g. a small max.message.bytes to make records undeliverable. */
  outputConfig?: ITopicConfig['configEntries'];
  dlqConfig?: ITopicConfig['configEntries'];
}

export class RankTopics {
  readonly input: string;
  readonly output: string;
  readonly dlq: string;
  readonly group: string;
  private readonly groups: string[] = [];
  private readonly readers: Consumer[] = [];

  private constructor(
    readonly kafka: Kafka,
    readonly admin: Admin,
    readonly producer: Producer,
    readonly run: string,
  ) {
    this.input = `batch-${run}-requests`;
    this.output = `batch-${run}-results`;
    this.dlq = `batch-${run}-dlq`;
    this.group = `batch-${run}-scorer`;
    this.groups.push(this.group);
  }

  static async create(name: string, options: RankTopicsOptions = {}): Promise<RankTopics> {
    const run = `${name}-${process.pid}-${randomBytes(3).toString('hex')}`;
    const kafka = new Kafka({
      clientId: `spec-${run}`,
      brokers: [TEST_BROKER],
      connectionTimeout: 3000,
      requestTimeout: 30_000,
      retry: { retries: 5, initialRetryTime: 200, maxRetryTime: 2000 },
      logLevel: logLevel.ERROR,
    });
    const admin = kafka.admin();
    await admin.connect();
    const producer = kafka.producer({
      createPartitioner: Partitioners.DefaultPartitioner,
      allowAutoTopicCreation: false,
    });
    await producer.connect();
    const topics = new RankTopics(kafka, admin, producer, run);
    const partitions = options.partitions ?? 4;
    await admin.createTopics({
      topics: [
        { topic: topics.input, numPartitions: partitions },
        {
          topic: topics.output,
          numPartitions: options.outputPartitions ?? partitions,
          configEntries: options.outputConfig,
        },
        { topic: topics.dlq, numPartitions: 1, configEntries: options.dlqConfig },
      ],
      waitForLeaders: true,
    });
    return topics;
  }

  /** The worker's settings for these topics. */
  env(): Record<string, string> {
    return {
      BATCH_INPUT_TOPIC: this.input,
      BATCH_OUTPUT_TOPIC: this.output,
      BATCH_DLQ_TOPIC: this.dlq,
      BATCH_SCORER_GROUP_ID: this.group,
    };
  }

  /** Produces to the input topic, `chunk` messages per request, acknowledged by the broker. */
  async produce(messages: Message[], chunk = 500): Promise<void> {
    for (let at = 0; at < messages.length; at += chunk)
      await this.producer.send({
        topic: this.input,
        acks: -1,
        messages: messages.slice(at, at + chunk),
      });
  }

  /**
   * Reads `topic` from its beginning in a group of its own, until close(). `autoCommit: false`
   * (a benchmark's reader: it never resumes from its group's offsets) spares the reader and the
   * broker an OffsetCommit after every batch.
   */
  async read(
    topic: string,
    onRecord: (record: ReadRecord) => void,
    maxWaitTimeInMs = 100,
    { autoCommit = true }: { autoCommit?: boolean } = {},
  ): Promise<Consumer> {
    const groupId = `${this.group}-reader-${this.groups.length}`;
    this.groups.push(groupId);
    const reader = this.kafka.consumer({ groupId, maxWaitTimeInMs });
    this.readers.push(reader);
    await reader.connect();
    await reader.subscribe({ topics: [topic], fromBeginning: true });
    await reader.run({
      autoCommit,
      eachBatch: async ({ batch }) => {
        for (const message of batch.messages)
          onRecord({
            key: message.key?.toString('utf8') ?? '',
            value: message.value,
            headers: headerStrings(message.headers),
            rawKey: message.key,
            rawHeaders: message.headers ?? {},
            partition: batch.partition,
            offset: message.offset,
          });
      },
    });
    return reader;
  }

  /** The group's committed offsets summed over the input's partitions, and the end of the input. */
  async progress(): Promise<{ committed: number; end: number }> {
    const [{ partitions }] = await this.admin.fetchOffsets({
      groupId: this.group,
      topics: [this.input],
    });
    const committed = partitions.reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
    const end = (await this.admin.fetchTopicOffsets(this.input)).reduce(
      (sum, p) => sum + Number(p.high),
      0,
    );
    return { committed, end };
  }

  async close(): Promise<void> {
    for (const reader of this.readers) await reader.disconnect().catch(() => undefined);
    await this.producer.disconnect().catch(() => undefined);
    await this.admin
      .deleteTopics({ topics: [this.input, this.output, this.dlq], timeout: 15_000 })
      .catch(() => undefined);
    await this.admin.deleteGroups(this.groups).catch(() => undefined);
    await this.admin.disconnect();
  }
}

export function headerStrings(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (value === undefined) continue;
    const last = Array.isArray(value) ? value[value.length - 1] : value;
    out[name] = Buffer.isBuffer(last) ? last.toString('utf8') : String(last);
  }
  return out;
}

/** A rank request message with `candidates` candidates from the demo items, keyed by user. */
export function rankRequest(
  n: number,
  candidates: number,
  extra: Record<string, unknown> = {},
): Message {
  const user = `u${(n % 200) + 1}`;
  const first = (n * 7) % 5000;
  const body = {
    requestId: `r${n}`,
    scene: 'feed',
    user: { id: user },
    context: { hour: n % 24, device: 'ios' },
    candidates: Array.from({ length: candidates }, (_, i) => ({
      id: `i${((first + i) % 5000) + 1}`,
    })),
    ...extra,
  };
  return { key: user, value: JSON.stringify(body) };
}

/** requestId -> how many results carried it, from the output records read so far. */
export class ResultTally {
  readonly counts = new Map<string, number>();
  readonly bodies = new Map<string, unknown>();
  total = 0;

  constructor(private readonly keepBodies = false) {}

  readonly add = (record: ReadRecord): void => {
    this.total++;
    this.counts.set(record.key, (this.counts.get(record.key) ?? 0) + 1);
    if (this.keepBodies && record.value)
      this.bodies.set(record.key, JSON.parse(record.value.toString()));
  };

  /** Ids of `expected` with no result yet. */
  missing(expected: Iterable<string>): string[] {
    const out: string[] = [];
    for (const id of expected) if (!this.counts.has(id)) out.push(id);
    return out;
  }

  get duplicates(): number {
    return this.total - this.counts.size;
  }
}
