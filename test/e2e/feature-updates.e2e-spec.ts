/**
 * Real-time feature updates end to end: two ranker replicas on the Redis store consume a features
 * topic on the real broker (127.0.0.1:9092) and Redis (127.0.0.1:6379), both started by jest's
 * globalSetup. Each spec run uses its own topics, writer group and Redis key prefix.
 */
import { DEAD_LETTER_HEADERS } from '@app/common';
import { REDIS_CLIENT } from '@app/features';
import {
  FeatureUpdatesLifecycle,
  RedisClient,
  RedisFeatureWriter,
  RedisKeys,
} from '@app/features/testing';
import Redis from 'ioredis';
import { Admin, IHeaders, Kafka, logLevel, Partitioners, Producer } from 'kafkajs';
import { eventually } from '../support/eventually';
import { fetchMetricSum } from '../support/metrics-text';
import { RankerClient } from './ranker-client';

const run = `${process.pid}-${Date.now().toString(36)}`;
const prefix = `rkt${process.pid}${Date.now().toString(36)}:`;
const topic = `e2e-feature-updates-${run}`;
const dlqTopic = `${topic}-dlq`;
const writerGroup = `e2e-feature-writer-${run}`;
const dlqReaderGroup = `e2e-feature-dlq-reader-${run}`;
const SEEDED_AT = 1_000;

const env = {
  FEATURE_STORE: 'redis',
  FEATURE_UPDATES_ENABLED: 'true',
  FEATURE_UPDATES_TOPIC: topic,
  FEATURE_UPDATES_DLQ_TOPIC: dlqTopic,
  FEATURE_UPDATES_WRITER_GROUP: writerGroup,
  FEATURES_REDIS_KEY_PREFIX: prefix,
  // The fetch deadline is for production latency; a loaded CI box must not turn reads degraded.
  FEATURES_FETCH_TIMEOUT_MS: '2000',
};

const users = [{ entity: 'user' as const, id: 'u1', fields: { age: 25, city: 'c21', level: 4 } }];
const items = ['i1', 'i2', 'i3', 'i4'].map((id, n) => ({
  entity: 'item' as const,
  id,
  fields: { category: `cat${n}`, price: 10 + n, rating: 4, ctr_7d: 0.03 },
}));
const rankBody = { user: { id: 'u1' }, candidates: items.map(({ id }) => ({ id })), topK: 4 };

async function scoreOf(ranker: RankerClient, id: string): Promise<number> {
  const reply = await ranker.rank('feed', rankBody);
  expect(reply.status).toBe(200);
  return reply.body.items.find((item: { id: string }) => item.id === id).score;
}

async function metric(ranker: RankerClient, series: string): Promise<number> {
  const text = await (await fetch(`${ranker.baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

const metricSum = (ranker: RankerClient, name: string, labels = '') =>
  fetchMetricSum(`${ranker.baseUrl}/metrics`, name, labels);

const updates = (ranker: RankerClient, result: string) =>
  metric(ranker, `ranker_features_updates_total{result="${result}"}`);

function headerText(headers: IHeaders | undefined, name: string): string | undefined {
  const value = headers?.[name];
  return value === undefined ? undefined : String(value);
}

describe('real-time feature updates from Kafka (two replicas, Redis store)', () => {
  const redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true, maxRetriesPerRequest: 1 });
  const keys = new RedisKeys(prefix);
  const kafka = new Kafka({
    clientId: `e2e-feature-updates-${run}`,
    brokers: ['127.0.0.1:9092'],
    connectionTimeout: 3000,
    retry: { retries: 5, initialRetryTime: 200, maxRetryTime: 2000 },
    logLevel: logLevel.ERROR,
  });
  let admin: Admin;
  let producer: Producer;
  let replicas: RankerClient[] = [];

  const storedRow = async (entity: 'user' | 'item', id: string) => {
    const blob = await redis.get(keys.key(entity, id));
    return blob === null ? undefined : (JSON.parse(blob) as Record<string, unknown>);
  };
  const publish = (messages: { key: string; value: string }[]) =>
    producer.send({ topic, acks: -1, messages });
  const publishUpdate = (update: Record<string, unknown>) =>
    publish([{ key: `${update.entity}:${update.id}`, value: JSON.stringify(update) }]);

  const committedTotal = async () => {
    const [{ partitions }] = await admin.fetchOffsets({ groupId: writerGroup, topics: [topic] });
    return partitions.reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
  };
  const endTotal = async () =>
    (await admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + Number(p.high), 0);
  const sumOver = async (probe: (r: RankerClient) => Promise<number>) =>
    (await Promise.all(replicas.map(probe))).reduce((a, b) => a + b, 0);

  /** Dead letters (from the start of the DLQ) until `wanted` says it has them all. */
  let dlqReaders = 0;
  const deadLetters = async (
    wanted: (dead: { key: string; reason: string }[]) => boolean,
  ): Promise<{ key: string; reason: string }[]> => {
    const groupId = `${dlqReaderGroup}-${++dlqReaders}`;
    readerGroups.push(groupId);
    const reader = kafka.consumer({ groupId, maxWaitTimeInMs: 200 });
    const dead: { key: string; reason: string }[] = [];
    try {
      await reader.connect();
      await reader.subscribe({ topics: [dlqTopic], fromBeginning: true });
      await reader.run({
        eachMessage: async ({ message }) => {
          dead.push({
            key: message.key?.toString() ?? '',
            reason: headerText(message.headers, DEAD_LETTER_HEADERS.reason) ?? '',
          });
        },
      });
      await eventually('the dead letters', async () => (wanted(dead) ? true : undefined));
    } finally {
      await reader.disconnect();
    }
    return dead;
  };
  const readerGroups: string[] = [];

  beforeAll(async () => {
    await redis.connect();
    await new RedisFeatureWriter(redis, keys).putRows([...users, ...items], SEEDED_AT);
    admin = kafka.admin();
    await admin.connect();
    // A small DLQ record limit, so a dead letter the broker refuses for good is easy to make.
    await admin.createTopics({
      topics: [{ topic: dlqTopic, configEntries: [{ name: 'max.message.bytes', value: '20000' }] }],
      waitForLeaders: true,
    });
    producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    replicas = [await RankerClient.start(env), await RankerClient.start(env)];
    // Each replica's cache refresher reads from "latest": wait until it has its position.
    await eventually('both replicas consuming the features topic', async () =>
      replicas.every((r) => r.app.get(FeatureUpdatesLifecycle).consuming) ? true : undefined,
    );
  });

  afterAll(async () => {
    const cacheGroups = replicas.map((r) => r.app.get(FeatureUpdatesLifecycle).cacheGroupId);
    await Promise.all(replicas.map((r) => r.close()));
    await producer?.disconnect();
    await admin
      ?.deleteTopics({ topics: [topic, dlqTopic], timeout: 10_000 })
      .catch(() => undefined);
    for (const group of [writerGroup, dlqReaderGroup, ...readerGroups, ...cacheGroups])
      await admin?.deleteGroups([group]).catch(() => undefined);
    await admin?.disconnect();
    const stale = await redis.keys(`${prefix}*`);
    if (stale.length > 0) await redis.del(...stale);
    await redis.quit();
  });

  it('writes a newer update to Redis once and refreshes the cached item in every replica', async () => {
    const before = await Promise.all(replicas.map((r) => scoreOf(r, 'i2'))); // i2 now cached
    const hitsBefore = await metric(replicas[0], 'ranker_features_cache_hits_total');
    const timestamp = Date.now();
    await publishUpdate({
      entity: 'item',
      id: 'i2',
      fields: { price: 4999.5, category: 'cat-updated' },
      timestamp,
    });

    const after = await eventually('both replicas score the updated i2', async () => {
      const scores = await Promise.all(replicas.map((r) => scoreOf(r, 'i2')));
      return scores.every((s, n) => s !== before[n]) ? scores : undefined;
    });
    expect(after[0]).toBeCloseTo(after[1], 6);
    expect(await storedRow('item', 'i2')).toEqual({
      ...items[1].fields,
      price: 4999.5,
      category: 'cat-updated',
      _ts: timestamp,
    });
    // Served from the refreshed cache, not re-read from Redis.
    expect(await metric(replicas[0], 'ranker_features_cache_hits_total')).toBeGreaterThan(
      hitsBefore,
    );
    const refreshed = await Promise.all(replicas.map((r) => updates(r, 'cache_refreshed')));
    expect(refreshed).toEqual([1, 1]);
    // One shared writer group: the update is written by exactly one replica.
    await eventually('the write counted', async () => {
      const written = await Promise.all(replicas.map((r) => updates(r, 'written')));
      return written[0] + written[1] === 1 ? true : undefined;
    });
    const lagCount = await Promise.all(
      replicas.map((r) => metric(r, 'ranker_features_update_lag_ms_count')),
    );
    expect(lagCount[0] + lagCount[1]).toBe(1);
  });

  it('never lets an older update overwrite a newer stored value', async () => {
    const storedBefore = await storedRow('item', 'i2');
    const scoresBefore = await Promise.all(replicas.map((r) => scoreOf(r, 'i2')));
    await publishUpdate({
      entity: 'item',
      id: 'i2',
      fields: { price: 1, category: 'cat-old' },
      timestamp: (storedBefore!._ts as number) - 60_000,
    });

    await eventually('the older update counted as stale', async () => {
      const stale = await Promise.all(replicas.map((r) => updates(r, 'stale')));
      return stale[0] + stale[1] === 1 ? true : undefined;
    });
    expect(await storedRow('item', 'i2')).toEqual(storedBefore);
    expect(await Promise.all(replicas.map((r) => scoreOf(r, 'i2')))).toEqual(scoresBefore);
    const refreshed = await Promise.all(replicas.map((r) => updates(r, 'cache_refreshed')));
    expect(refreshed).toEqual([1, 1]);
  });

  it('writes user updates to Redis (users are read per request, not cached)', async () => {
    const timestamp = Date.now();
    await publishUpdate({ entity: 'user', id: 'u1', fields: { age: 61 }, timestamp });
    const row = await eventually('u1 updated in Redis', async () => {
      const stored = await storedRow('user', 'u1');
      return stored?._ts === timestamp ? stored : undefined;
    });
    expect(row).toEqual({ ...users[0].fields, age: 61, _ts: timestamp });
  });

  it('dead-letters unparseable messages with the reason and keeps serving', async () => {
    await publish([
      { key: 'garbage', value: 'price=3 (not JSON)' },
      { key: 'item:', value: JSON.stringify({ entity: 'item', fields: { price: 2 } }) },
    ]);

    const reader = kafka.consumer({ groupId: dlqReaderGroup, maxWaitTimeInMs: 200 });
    const dead: { key: string; value: string; headers: IHeaders | undefined }[] = [];
    try {
      await reader.connect();
      await reader.subscribe({ topics: [dlqTopic], fromBeginning: true });
      await reader.run({
        eachMessage: async ({ message }) => {
          dead.push({
            key: message.key?.toString() ?? '',
            value: message.value?.toString() ?? '',
            headers: message.headers,
          });
        },
      });
      await eventually('two dead letters', async () => (dead.length >= 2 ? true : undefined));
    } finally {
      await reader.disconnect();
    }

    dead.sort((a, b) => a.key.localeCompare(b.key));
    expect(dead.map((d) => d.key)).toEqual(['garbage', 'item:']);
    expect(dead[0].value).toBe('price=3 (not JSON)');
    expect(headerText(dead[0].headers, DEAD_LETTER_HEADERS.reason)).toMatch(/^not JSON \(/);
    expect(headerText(dead[1].headers, DEAD_LETTER_HEADERS.reason)).toBe(
      'id must be a non-empty string',
    );
    for (const { headers } of dead) {
      expect(headerText(headers, DEAD_LETTER_HEADERS.topic)).toBe(topic);
      expect(headerText(headers, DEAD_LETTER_HEADERS.partition)).toMatch(/^\d+$/);
      expect(headerText(headers, DEAD_LETTER_HEADERS.offset)).toMatch(/^\d+$/);
    }
    const deadLettered = await Promise.all(replicas.map((r) => updates(r, 'dead_lettered')));
    expect(deadLettered[0] + deadLettered[1]).toBe(2);
    for (const replica of replicas) expect((await replica.rank('feed', rankBody)).status).toBe(200);
  });

  it('applies the valid fields of an update and counts a field of the wrong type', async () => {
    const timestamp = Date.now();
    await publishUpdate({
      entity: 'item',
      id: 'i3',
      fields: { price: { x: 1 }, rating: 1.5 },
      timestamp,
    });
    const row = await eventually('i3 updated in Redis', async () => {
      const stored = await storedRow('item', 'i3');
      return stored?._ts === timestamp ? stored : undefined;
    });
    expect(row).toEqual({ ...items[2].fields, rating: 1.5, _ts: timestamp });
    const series = 'ranker_features_bad_values_total{source="update",reason="wrong_type"}';
    const bad = await Promise.all(replicas.map((r) => metric(r, series)));
    expect(bad[0] + bad[1]).toBe(1);
  });

  it('retries an update Redis could not take and commits its offset only once written', async () => {
    const clients = replicas.map((r) => r.app.get<RedisClient>(REDIS_CLIENT));
    const committed = async () => {
      const [{ partitions }] = await admin.fetchOffsets({ groupId: writerGroup, topics: [topic] });
      return partitions.reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
    };
    const end = async () =>
      (await admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + Number(p.high), 0);
    await eventually('earlier updates committed', async () =>
      (await committed()) === (await end()) ? true : undefined,
    );
    const failedBefore = await Promise.all(replicas.map((r) => updates(r, 'failed')));

    for (const client of clients) client.disconnect();
    const timestamp = Date.now();
    await publishUpdate({ entity: 'item', id: 'i4', fields: { price: 77 }, timestamp });
    const published = await end();
    await eventually('a failed write counted', async () => {
      const failed = await Promise.all(replicas.map((r) => updates(r, 'failed')));
      return failed[0] + failed[1] > failedBefore[0] + failedBefore[1] ? true : undefined;
    });
    // The stalled partition is visible: its retries are counted by topic and partition.
    expect(
      await sumOver((r) =>
        metricSum(r, 'ranker_features_update_retries_total', `topic="${topic}"`),
      ),
    ).toBeGreaterThan(0);
    expect(await committed()).toBe(published - 1);
    for (const replica of replicas) expect((await replica.rank('feed', rankBody)).status).toBe(200);

    await Promise.all(clients.map((client) => client.connect()));
    const row = await eventually(
      'i4 written once Redis is back',
      async () => {
        const stored = await storedRow('item', 'i4');
        return stored?._ts === timestamp ? stored : undefined;
      },
      20_000,
    );
    expect(row).toEqual({ ...items[3].fields, price: 77, _ts: timestamp });
    await eventually('its offset committed', async () =>
      (await committed()) === published ? true : undefined,
    );
  });

  it('dead-letters an update for a key of another type or a corrupt row, and its partition moves on', async () => {
    const hashKey = keys.key('item', 'as-hash');
    const corruptKey = keys.key('item', 'corrupt');
    await redis.hset(hashKey, 'price', '3');
    await redis.set(corruptKey, 'price=3 (not JSON)');
    const timestamp = Date.now();
    // One message key: all three land in one partition, the good update behind the bad ones.
    const update = (id: string, fields: Record<string, unknown>) =>
      JSON.stringify({ entity: 'item', id, fields, timestamp });
    await publish([
      { key: 'stall', value: update('as-hash', { price: 4 }) },
      { key: 'stall', value: update('corrupt', { price: 4 }) },
      { key: 'stall', value: update('i1', { price: 55 }) },
    ]);

    const row = await eventually('the update behind the bad ones written', async () => {
      const stored = await storedRow('item', 'i1');
      return stored?._ts === timestamp ? stored : undefined;
    });
    expect(row).toEqual({ ...items[0].fields, price: 55, _ts: timestamp });
    const dead = await deadLetters((d) => d.filter((x) => x.key === 'stall').length >= 2);
    expect(dead.filter((d) => d.key === 'stall').map((d) => d.reason)).toEqual([
      `Redis key ${hashKey} holds a hash, not a string row (WRONGTYPE)`,
      `stored row at Redis key ${corruptKey} cannot be merged: not a JSON object`,
    ]);
    expect(await redis.hget(hashKey, 'price')).toBe('3');
    expect(await redis.get(corruptKey)).toBe('price=3 (not JSON)');
    await eventually('every offset committed', async () =>
      (await committedTotal()) === (await endTotal()) ? true : undefined,
    );
    expect(await sumOver((r) => updates(r, 'refused_by_store'))).toBe(2);
  });

  it('logs and counts a dead letter the broker refuses for good, and its partition moves on', async () => {
    const timestamp = Date.now();
    await publish([
      { key: 'too-large', value: `not JSON ${'x'.repeat(30_000)}` },
      {
        key: 'too-large',
        value: JSON.stringify({ entity: 'item', id: 'i3', fields: { rating: 2.5 }, timestamp }),
      },
    ]);

    await eventually('the update behind the undeliverable one written', async () => {
      const stored = await storedRow('item', 'i3');
      return stored?._ts === timestamp ? stored : undefined;
    });
    const dropped = () =>
      sumOver((r) =>
        metricSum(r, 'ranker_features_dead_letters_dropped_total', 'reason="MESSAGE_TOO_LARGE"'),
      );
    await eventually('the dropped dead letter counted', async () =>
      (await dropped()) === 1 ? true : undefined,
    );
    await eventually('every offset committed', async () =>
      (await committedTotal()) === (await endTotal()) ? true : undefined,
    );
    for (const replica of replicas) expect((await replica.rank('feed', rankBody)).status).toBe(200);
  });
});

describe('feature updates with the broker down at boot', () => {
  it('serves features from Redis and shuts down promptly', async () => {
    const ranker = await RankerClient.start({
      ...env,
      KAFKA_BROKERS: '127.0.0.1:1',
      FEATURES_REDIS_KEY_PREFIX: `${prefix}down:`,
    });
    try {
      expect((await ranker.rank('feed', rankBody)).status).toBe(200);
      expect(ranker.app.get(FeatureUpdatesLifecycle).consuming).toBe(false);
    } finally {
      const started = Date.now();
      await ranker.close();
      expect(Date.now() - started).toBeLessThan(5_000);
    }
  });
});
