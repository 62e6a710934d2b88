/**
 * Fuzzing Kafka feature updates: the ranker app (Redis store, updates on) consumes a few thousand
 * generated messages from a 4-partition topic on the real broker, hostile ones (not JSON, wrong
 * types, huge and deep values, odd unicode, prototype keys, a bad entity/id/fields/timestamp,
 * targets that are Redis hashes or corrupt rows) mixed with valid ones. Every message the
 * generator marks bad reaches the DLQ with its reason, nothing else does; every valid one reaches
 * Redis as a model of merge-if-newer says; and the writer's committed offsets reach the end of
 * every partition (no stall). fast-check generates with a fixed seed, printed on failure.
 */
import { DEAD_LETTER_HEADERS } from '@app/common';
import { RedisKeys } from '@app/features/testing';
import fc from 'fast-check';
import Redis from 'ioredis';
import { Admin, Consumer, Kafka, logLevel, Partitioners, Producer } from 'kafkajs';
import { RankerClient } from './ranker-client';

const run = `${process.pid}-${Date.now().toString(36)}`;
const prefix = `rkfz${process.pid}${Date.now().toString(36)}:`;
const topic = `e2e-feature-fuzz-${run}`;
const dlqTopic = `${topic}-dlq`;
const writerGroup = `e2e-feature-fuzz-writer-${run}`;
const dlqReaderGroup = `e2e-feature-fuzz-dlq-${run}`;
const SEED = Number(process.env.FUZZ_SEED || 20_260_707);
const MESSAGES = 3_000;
const FUZZ_HEADER = 'x-fuzz-id';

type Value = string | number | boolean;
type Generated =
  | {
      bad: false;
      entity: 'user' | 'item';
      id: string;
      fields: [string, Value][];
      ts: number;
      text: string;
    }
  | { bad: true; reason: RegExp; key: string | null; value: string | null };

const keys = new RedisKeys(prefix);
const wrongTypeIds = ['wt-0', 'wt-1', 'wt-2'];
const corruptRows: Record<string, string> = {
  'bad-0': 'price=3',
  'bad-1': '[1,2]',
  'bad-2': '{"a":1',
  'bad-3': `{"deep":${'['.repeat(20_000)}}`,
  'bad-4': '{"a":"\u0001"}',
};
const validIds = [
  ...Array.from({ length: 30 }, (_, i) => `i${i}`),
  'constructor',
  'toString',
  '__proto__',
  'é 😀 ÿ',
  '键',
  'a"b\\c',
];

const featureName = fc
  .oneof(
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }),
    fc.constantFrom('price', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '😀', 'é'),
  )
  .filter((name) => name !== '_ts' && name !== '__proto__');
const featureValue: fc.Arbitrary<Value> = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.boolean(),
  fc.constantFrom(Number('123456789012345678'), 0.1, 1e21, 'x'.repeat(2000)),
);
/** Fields an update may carry that are dropped (the rest of the update is applied). */
const droppedField = fc.constantFrom(
  ['_ts', '5'],
  ['__proto__', '1'],
  ['gone', 'null'],
  ['nested', '{"a":{"b":[1,2]}}'],
  ['list', '[1,2,3]'],
  ['inf', '1e400'],
  ['deep', `${'['.repeat(5_000)}${']'.repeat(5_000)}`],
);
const json = (name: string, raw: string) => `${JSON.stringify(name)}:${raw}`;

const valid: fc.Arbitrary<Generated> = fc
  .record({
    entity: fc.constantFrom('user' as const, 'item' as const),
    id: fc.constantFrom(...validIds),
    fields: fc.uniqueArray(fc.tuple(featureName, featureValue), {
      selector: ([name]) => name,
      maxLength: 5,
    }),
    dropped: fc.array(droppedField, { maxLength: 2 }),
    ts: fc.integer({ min: 0, max: 1_000 }),
  })
  .map(({ entity, id, fields, dropped, ts }) => {
    const members = [
      ...fields.map(([n, v]) => json(n, JSON.stringify(v))),
      ...dropped.filter(([n]) => !fields.some(([f]) => f === n)).map(([n, raw]) => json(n, raw)),
    ];
    const text =
      `{"entity":${JSON.stringify(entity)},"id":${JSON.stringify(id)},` +
      `"fields":{${members.join(',')}},"timestamp":${ts}}`;
    return { bad: false as const, entity, id, fields, ts, text };
  });

const badJson = (reason: RegExp, value: fc.Arbitrary<string>): fc.Arbitrary<Generated> =>
  fc
    .tuple(value, fc.option(fc.string({ unit: 'binary', maxLength: 12 }), { nil: null }))
    .map(([text, key]) => ({ bad: true as const, reason, key, value: text }));
const envelope = (over: Record<string, string>) => {
  const base: Record<string, string> = {
    entity: '"item"',
    id: '"i1"',
    fields: '{"price":1}',
    timestamp: '1',
    ...over,
  };
  return `{${Object.entries(base)
    .filter(([, raw]) => raw !== '')
    .map(([n, raw]) => json(n, raw))
    .join(',')}}`;
};
const anyJson = fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v));

const bad: fc.Arbitrary<Generated> = fc.oneof(
  badJson(
    /^not JSON \(/,
    fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).filter((s) => {
      try {
        JSON.parse(s);
        return false;
      } catch {
        return s.trim() !== '';
      }
    }),
  ),
  fc.constant({ bad: true as const, reason: /^empty message value$/, key: 'empty', value: null }),
  badJson(
    /^not a JSON object$/,
    fc.oneof(
      fc.constantFrom('null', '[]', '"s"', '1', 'true'),
      fc.array(anyJson).map((a) => `[${a.join(',')}]`),
    ),
  ),
  badJson(
    /^entity must be "user" or "item"$/,
    fc.oneof(
      anyJson.filter((v) => v !== '"user"' && v !== '"item"').map((e) => envelope({ entity: e })),
      fc.constant(envelope({ entity: '' })),
      fc.constant(`{"__proto__":${envelope({})}}`),
      fc.constant(envelope({ entity: '"constructor"' })),
    ),
  ),
  badJson(
    /^id must be a non-empty string$/,
    fc.oneof(
      anyJson.filter((v) => !v.startsWith('"') || v === '""').map((id) => envelope({ id })),
      fc.constant(envelope({ id: '' })),
    ),
  ),
  badJson(
    /^fields must be an object$/,
    fc
      .oneof(
        fc.constantFrom('null', '[]', '"f"', '3', `${'['.repeat(5_000)}${']'.repeat(5_000)}`),
        fc.constant(''),
      )
      .map((fields) => envelope({ fields })),
  ),
  badJson(
    /^timestamp must be a finite number >= 0 \(ms since epoch\)$/,
    fc
      .constantFrom('-1', '"5"', '1e400', 'null', '{}', '[1]', 'true')
      .map((timestamp) => envelope({ timestamp })),
  ),
  badJson(/^not JSON \(/, fc.constant(`{"entity":"item","id":"${'x'.repeat(100_000)}`)),
  fc.constantFrom(...wrongTypeIds).map((id) => ({
    bad: true as const,
    reason: new RegExp(
      `^Redis key ${escape(keys.key('item', id))} holds a hash, not a string row \\(WRONGTYPE\\)$`,
    ),
    key: `item:${id}`,
    value: envelope({ id: JSON.stringify(id) }),
  })),
  fc.constantFrom(...Object.keys(corruptRows)).map((id) => ({
    bad: true as const,
    reason: new RegExp(
      `^stored row at Redis key ${escape(keys.key('user', id))} cannot be merged: `,
    ),
    key: `user:${id}`,
    value: envelope({ entity: '"user"', id: JSON.stringify(id) }),
  })),
);

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

async function eventually(what: string, probe: () => Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe(`fuzzed Kafka feature updates (seed ${SEED})`, () => {
  const redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true, maxRetriesPerRequest: 1 });
  const kafka = new Kafka({
    clientId: `e2e-feature-fuzz-${run}`,
    brokers: ['127.0.0.1:9092'],
    logLevel: logLevel.ERROR,
  });
  let admin: Admin;
  let producer: Producer;
  let dlqReader: Consumer;
  let ranker: RankerClient | undefined;
  const dead = new Map<string, string>();

  beforeAll(async () => {
    await redis.connect();
    for (const id of wrongTypeIds) await redis.hset(keys.key('item', id), 'price', '1');
    for (const [id, text] of Object.entries(corruptRows))
      await redis.set(keys.key('user', id), text);
    admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      topics: [{ topic, numPartitions: 4 }, { topic: dlqTopic }],
      waitForLeaders: true,
    });
    producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    dlqReader = kafka.consumer({ groupId: dlqReaderGroup, maxWaitTimeInMs: 200 });
    await dlqReader.connect();
    await dlqReader.subscribe({ topics: [dlqTopic], fromBeginning: true });
    await dlqReader.run({
      eachMessage: async ({ message }) => {
        const id = message.headers?.[FUZZ_HEADER]?.toString() ?? '?';
        dead.set(id, message.headers?.[DEAD_LETTER_HEADERS.reason]?.toString() ?? '');
      },
    });
    ranker = await RankerClient.start({
      FEATURE_STORE: 'redis',
      FEATURE_UPDATES_ENABLED: 'true',
      FEATURE_UPDATES_TOPIC: topic,
      FEATURE_UPDATES_DLQ_TOPIC: dlqTopic,
      FEATURE_UPDATES_WRITER_GROUP: writerGroup,
      FEATURES_REDIS_KEY_PREFIX: prefix,
      FEATURES_FETCH_TIMEOUT_MS: '2000',
    });
  });

  afterAll(async () => {
    await ranker?.close();
    await dlqReader?.disconnect();
    await producer?.disconnect();
    await admin
      ?.deleteTopics({ topics: [topic, dlqTopic], timeout: 10_000 })
      .catch(() => undefined);
    for (const group of [writerGroup, dlqReaderGroup])
      await admin?.deleteGroups([group]).catch(() => undefined);
    await admin?.disconnect();
    const stale = await redis.keys(`${prefix}*`);
    for (let i = 0; i < stale.length; i += 500) await redis.del(...stale.slice(i, i + 500));
    await redis.quit();
  });

  it('dead-letters exactly the bad ones, writes the valid ones, and no partition stalls', async () => {
    const generated = fc.sample(
      fc.oneof({ arbitrary: valid, weight: 3 }, { arbitrary: bad, weight: 2 }),
      {
        seed: SEED,
        numRuns: MESSAGES,
      },
    );
    const tag = (n: number) => ({ [FUZZ_HEADER]: `m${n}` });
    const messages = generated.map((g, n) =>
      g.bad
        ? { key: g.key, value: g.value, headers: tag(n) }
        : { key: `${g.entity}:${g.id}`, value: g.text, headers: tag(n) },
    );
    for (let i = 0; i < messages.length; i += 100)
      await producer.send({ topic, acks: -1, messages: messages.slice(i, i + 100) });

    const committed = async () => {
      const [{ partitions }] = await admin.fetchOffsets({ groupId: writerGroup, topics: [topic] });
      return partitions.map((p) => Number(p.offset));
    };
    const ends = (await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, Number(p.high)]);
    await eventually('the writer committed every partition to its end', async () => {
      const offsets = await committed();
      return ends.every(([partition, high]) => offsets[partition] === high);
    });

    const badOnes = generated.flatMap((g, n) => (g.bad ? [[`m${n}`, g.reason] as const] : []));
    // The sample really mixes every kind of hostile message in (the seed is fixed).
    const kinds = new Set(badOnes.map(([, reason]) => reason.source.split(' ')[0]));
    expect([...kinds].sort()).toEqual(
      ['^Redis', '^empty', '^entity', '^fields', '^id', '^not', '^stored', '^timestamp'].sort(),
    );
    expect(badOnes.length).toBeGreaterThan(MESSAGES / 4);
    await eventually(
      'every dead letter read back',
      async () => dead.size >= badOnes.length,
      20_000,
    );
    expect(dead.size).toBe(badOnes.length);
    const wrongReasons = badOnes.filter(([id, reason]) => !reason.test(dead.get(id) ?? '(none)'));
    expect(wrongReasons.map(([id, reason]) => `${id}: ${dead.get(id)} !~ ${reason}`)).toEqual([]);

    // Merge-if-newer, per entity in publish order (one key, one partition).
    const model = new Map<string, { row: Record<string, Value>; ts: number }>();
    for (const g of generated) {
      if (g.bad || g.fields.length === 0) continue;
      const key = keys.key(g.entity, g.id);
      const stored = model.get(key);
      if (stored && stored.ts >= g.ts) continue;
      const row = { ...stored?.row };
      for (const [name, value] of g.fields) row[name] = value === 0 ? 0 : value;
      model.set(key, { row, ts: g.ts });
    }
    expect(model.size).toBeGreaterThan(validIds.length);
    for (const [key, { row, ts }] of model) {
      const text = await redis.get(key);
      expect({ key, row: text === null ? null : JSON.parse(text) }).toEqual({
        key,
        row: { ...row, _ts: ts },
      });
    }
    // The bad targets are as they were.
    for (const id of wrongTypeIds)
      expect(await redis.hget(keys.key('item', id), 'price')).toBe('1');
    for (const [id, text] of Object.entries(corruptRows))
      expect(await redis.get(keys.key('user', id))).toBe(text);
    expect(
      (await ranker!.rank('feed', { user: { id: 'u1' }, candidates: [{ id: 'i1' }] })).status,
    ).toBe(200);
  });
});
