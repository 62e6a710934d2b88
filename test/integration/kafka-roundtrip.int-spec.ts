/**
 * Proves that kafkajs (the client the services use) works end-to-end against the real broker
 * started by test/services/kafka.sh: admin create/describe/delete topic, keyed produce, consumer
 * group join/sync/fetch from the beginning, manual offset commit + admin offset fetch.
 *
 * Needs a broker on 127.0.0.1:9092 (jest globalSetup runs test/services/up.sh).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Admin, Consumer, IHeaders, Kafka, logLevel, Partitioners, Producer } from 'kafkajs';
import { scriptStartedBroker } from '../support/script-broker';

const BROKER_HOST = '127.0.0.1';
const BROKER_PORT = 9092;
const N = 100;
const PARTITIONS = 3;
const DISTINCT_KEYS = 17;

const repoRoot = resolve(__dirname, '..', '..');
const stateDir = process.env.RANKER_SERVICES_DIR ?? join(repoRoot, '.services');

/** Broker version the repo pins: <kafka.version> in the pom (kafka.sh honours the same override). */
function pinnedKafkaVersion(): string {
  if (process.env.RANKER_KAFKA_VERSION) return process.env.RANKER_KAFKA_VERSION;
  const pom = readFileSync(join(repoRoot, 'test/services/kafka/pom.xml'), 'utf8');
  const match = /<kafka\.version>\s*([^<\s]+)\s*<\/kafka\.version>/.exec(pom);
  if (!match) throw new Error('no <kafka.version> in test/services/kafka/pom.xml');
  return match[1];
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

interface Msg {
  key: string;
  value: string;
  headers: Record<string, string>;
}

interface Consumed extends Msg {
  partition: number;
  offset: string;
}

function headersToStrings(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    out[name] = Buffer.isBuffer(value) ? value.toString('utf8') : String(value);
  }
  return out;
}

describe('kafka round trip (kafkajs <-> real broker)', () => {
  const runId = `${Date.now()}-${randomUUID().slice(0, 8)}`;
  const topic = `it-roundtrip-${runId}`;
  const groupId = `it-roundtrip-group-${runId}`;

  const kafka = new Kafka({
    clientId: `ranker-it-${runId}`,
    brokers: [`${BROKER_HOST}:${BROKER_PORT}`],
    connectionTimeout: 3000,
    requestTimeout: 15000,
    retry: { retries: 5, initialRetryTime: 200, maxRetryTime: 2000 },
    logLevel: logLevel.ERROR,
  });

  let admin: Admin;
  let producer: Producer | undefined;
  let consumer: Consumer | undefined;
  let topicCreated = false;

  const sent: Msg[] = Array.from({ length: N }, (_, i) => ({
    key: `user-${i % DISTINCT_KEYS}`,
    value: JSON.stringify({ i, itemId: `item-${i}`, score: i / N, runId }),
    headers: { seq: String(i), 'content-type': 'application/json' },
  }));
  const consumed: Consumed[] = [];

  beforeAll(async () => {
    admin = kafka.admin();
    await withTimeout(admin.connect(), 15000, 'admin.connect');
  });

  afterAll(async () => {
    const errors: unknown[] = [];
    const attempt = async (what: string, fn: () => Promise<unknown>) => {
      try {
        await withTimeout(fn(), 15000, what);
      } catch (err) {
        errors.push(err);
      }
    };
    if (consumer) await attempt('consumer.disconnect', () => consumer!.disconnect());
    if (producer) await attempt('producer.disconnect', () => producer!.disconnect());
    if (topicCreated) {
      await attempt('admin.deleteTopics', () =>
        admin.deleteTopics({ topics: [topic], timeout: 10000 }),
      );
      await attempt('admin.deleteGroups', () => admin.deleteGroups([groupId]));
    }
    await attempt('admin.disconnect', () => admin.disconnect());
    if (errors.length) throw errors[0];
  });

  it('describes a single-node cluster on 127.0.0.1:9092', async () => {
    const cluster = await admin.describeCluster();
    expect(cluster.brokers).toEqual([{ nodeId: 1, host: BROKER_HOST, port: BROKER_PORT }]);
    expect(cluster.controller).toBe(1);
    expect(cluster.clusterId).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  // kafkajs cannot ask a broker for its release version (it speaks ApiVersions v0-v2, which
  // carry no version/feature info). What it can tell is the cluster id: kafka.sh formats the
  // storage with a fresh random cluster id and records it next to the version whose jars it
  // launched, so a matching id proves the broker answering here is that one. The record is this
  // checkout's, or that of the checkout whose kafka.sh started the broker running now (a fresh
  // clone tested beside another checkout's services reuses them). When no kafka.sh started the
  // broker (an external one), there is nothing honest to assert.
  const started = scriptStartedBroker(stateDir, BROKER_PORT);
  (started ? it : it.skip)(
    `runs the pinned Kafka ${pinnedKafkaVersion()} started by test/services/kafka.sh`,
    async () => {
      expect(started!.version).toBe(pinnedKafkaVersion());
      expect(started!.libs).toMatch(
        new RegExp(`kafka-libs-${pinnedKafkaVersion().replace(/\./g, '\\.')}$`),
      );
      const cluster = await admin.describeCluster();
      expect(cluster.clusterId).toBe(started!.clusterId);
    },
  );

  it(`creates a ${PARTITIONS}-partition topic`, async () => {
    const created = await admin.createTopics({
      topics: [{ topic, numPartitions: PARTITIONS, replicationFactor: 1 }],
      waitForLeaders: true,
      timeout: 15000,
    });
    expect(created).toBe(true);
    topicCreated = true;
    const meta = await admin.fetchTopicMetadata({ topics: [topic] });
    expect(meta.topics).toHaveLength(1);
    expect(meta.topics[0].partitions.map((p) => p.partitionId).sort()).toEqual([0, 1, 2]);
    expect(await admin.listTopics()).toContain(topic);
  });

  it(`produces ${N} keyed messages and a fresh group consumes all of them from the beginning`, async () => {
    producer = kafka.producer({
      createPartitioner: Partitioners.DefaultPartitioner,
      allowAutoTopicCreation: false,
    });
    await producer.connect();
    const batchSize = 25;
    for (let start = 0; start < N; start += batchSize) {
      const records = await producer.send({
        topic,
        acks: -1,
        messages: sent.slice(start, start + batchSize).map((m) => ({ ...m })),
      });
      expect(records.every((r) => r.errorCode === 0)).toBe(true);
    }

    const highWatermarks = await admin.fetchTopicOffsets(topic);
    expect(highWatermarks.reduce((sum, p) => sum + Number(p.high), 0)).toBe(N);

    consumer = kafka.consumer({
      groupId,
      sessionTimeout: 10000,
      rebalanceTimeout: 10000,
      heartbeatInterval: 1000,
      maxWaitTimeInMs: 250,
      retry: { retries: 5, initialRetryTime: 200, maxRetryTime: 2000 },
    });
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });

    let resolveAll!: () => void;
    const allConsumed = new Promise<void>((res) => (resolveAll = res));
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        consumed.push({
          partition,
          offset: message.offset,
          key: message.key?.toString('utf8') ?? '',
          value: message.value?.toString('utf8') ?? '',
          headers: headersToStrings(message.headers),
        });
        if (consumed.length >= N) resolveAll();
      },
    });
    await withTimeout(allConsumed, 30000, `consuming ${N} messages (got ${consumed.length})`);

    // exactly what was sent: same keys, values and headers, each message once
    const bySeq = [...consumed].sort((a, b) => Number(a.headers.seq) - Number(b.headers.seq));
    expect(bySeq.map(({ key, value, headers }) => ({ key, value, headers }))).toEqual(sent);

    // keyed partitioning: one partition per key, and all partitions are used
    const partitionOfKey = new Map<string, number>();
    for (const m of consumed) {
      expect(partitionOfKey.get(m.key) ?? m.partition).toBe(m.partition);
      partitionOfKey.set(m.key, m.partition);
    }
    expect(partitionOfKey.size).toBe(DISTINCT_KEYS);
    expect(new Set(consumed.map((m) => m.partition)).size).toBe(PARTITIONS);

    // per partition: offsets 0..n-1 in order, and production order is kept
    for (let p = 0; p < PARTITIONS; p++) {
      const inPartition = consumed.filter((m) => m.partition === p);
      expect(inPartition.map((m) => Number(m.offset))).toEqual(inPartition.map((_, i) => i));
      const seqs = inPartition.map((m) => Number(m.headers.seq));
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      const high = highWatermarks.find((h) => h.partition === p)!;
      expect(Number(high.high)).toBe(inPartition.length);
    }

    const [group] = (await admin.describeGroups([groupId])).groups;
    expect(group.state).toBe('Stable');
    expect(group.protocolType).toBe('consumer');
    expect(group.members).toHaveLength(1);
  });

  it('commits the consumed offsets and admin.fetchOffsets reports them', async () => {
    expect(consumer).toBeDefined();
    const nextOffsets = new Map<number, number>();
    for (const m of consumed) {
      nextOffsets.set(
        m.partition,
        Math.max(nextOffsets.get(m.partition) ?? 0, Number(m.offset) + 1),
      );
    }
    expect(nextOffsets.size).toBe(PARTITIONS);

    // before the commit the fresh group has no committed offsets
    const before = await admin.fetchOffsets({ groupId, topics: [topic] });
    expect(before[0].partitions.every((p) => p.offset === '-1')).toBe(true);

    await consumer!.commitOffsets(
      [...nextOffsets].map(([partition, offset]) => ({ topic, partition, offset: String(offset) })),
    );

    const after = await admin.fetchOffsets({ groupId, topics: [topic] });
    expect(after).toHaveLength(1);
    expect(after[0].topic).toBe(topic);
    const committed = after[0].partitions
      .map((p) => ({ partition: p.partition, offset: p.offset }))
      .sort((a, b) => a.partition - b.partition);
    const highWatermarks = (await admin.fetchTopicOffsets(topic))
      .map((p) => ({ partition: p.partition, offset: p.high }))
      .sort((a, b) => a.partition - b.partition);
    expect(committed).toEqual(highWatermarks);
    expect(committed.reduce((sum, p) => sum + Number(p.offset), 0)).toBe(N);

    // the group leaves cleanly and is then empty
    await consumer!.disconnect();
    consumer = undefined;
    const [group] = (await admin.describeGroups([groupId])).groups;
    expect(group.state).toBe('Empty');
  });
});
