/**
 * The Kafka worker end to end, in this process, against the real broker (127.0.0.1:9092): rank
 * requests in, results out, dead letters, metrics. Each run creates its own topics and group and
 * deletes them at the end. The specs that kill and add worker processes are in
 * batch-scorer-scale-out.e2e-spec.ts; memory under a backlog in batch-scorer-backlog.e2e-spec.ts.
 */
import { INestApplicationContext } from '@nestjs/common';
import { DEAD_LETTER_HEADERS } from '@app/common';
import { RankService } from '@app/pipeline';
import { Consumer, Message } from 'kafkajs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBatchScorer } from '../../apps/batch-scorer/src/batch-scorer-app';
import { MetricsServer } from '../../apps/batch-scorer/src/metrics/metrics-server';
import { RankRequestConsumer } from '../../apps/batch-scorer/src/rank/rank-request.consumer';
import {
  RankTopics,
  RankTopicsOptions,
  rankRequest,
  ReadRecord,
  ResultTally,
} from '../support/rank-topics';
import { writeVersion } from '../support/bundle-versions';
import { eventually } from '../support/eventually';
import { metricSum } from '../support/metrics-text';

/** Starts the worker in this process on `topics`; resolves once it consumes. */
async function startWorker(
  topics: RankTopics,
  env: Record<string, string> = {},
): Promise<INestApplicationContext> {
  const vars = {
    ...topics.env(),
    BATCH_METRICS_PORT: '0',
    BATCH_METRICS_HOST: '127.0.0.1',
    ...env,
  };
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  let app: INestApplicationContext;
  try {
    app = await createBatchScorer(['error']);
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  await eventually('the worker consuming', () =>
    app.get(RankRequestConsumer).consuming ? true : undefined,
  );
  return app;
}

async function metricsText(app: INestApplicationContext): Promise<string> {
  const port = app.get(MetricsServer).port;
  return (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
}

async function metric(app: INestApplicationContext, name: string, labels = ''): Promise<number> {
  return metricSum(await metricsText(app), name, labels);
}

const json = (record: ReadRecord) => JSON.parse(record.value!.toString()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function setUp(name: string, options: RankTopicsOptions, env?: Record<string, string>) {
  const topics = await RankTopics.create(name, options);
  const results = new Map<string, ReadRecord[]>();
  const dead: ReadRecord[] = [];
  const readers: Consumer[] = [];
  const tally = new ResultTally();
  readers.push(
    await topics.read(topics.output, (record) => {
      tally.add(record);
      results.set(record.key, [...(results.get(record.key) ?? []), record]);
    }),
    await topics.read(topics.dlq, (record) => dead.push(record)),
  );
  try {
    const app = await startWorker(topics, env);
    return { topics, results, dead, tally, app };
  } catch (error) {
    await topics.close();
    throw error;
  }
}

describe('batch scorer (in process, real broker)', () => {
  let spec: Awaited<ReturnType<typeof setUp>>;

  beforeAll(async () => {
    spec = await setUp('e2e', {
      partitions: 4,
      // A dead letter over 20 kB is refused by the broker for good.
      dlqConfig: [{ name: 'max.message.bytes', value: '20000' }],
    });
  }, 120_000);

  afterAll(async () => {
    await spec?.app.close();
    await spec?.topics.close();
  });

  it('ranks a message as the HTTP rank path ranks the same request, keyed by requestId', async () => {
    const { topics, results, app } = spec;
    const request = {
      user: { id: 'u7', features: { age: 44 } },
      context: { hour: 9, device: 'android' },
      candidates: ['i1', 'i2', 'i3', 'i4', 'i5'].map((id) => ({ id })),
      topK: 5,
    };
    await topics.produce([
      { key: 'u7', value: JSON.stringify({ requestId: 'same-1', scene: 'feed', ...request }) },
      {
        key: 'u7',
        value: JSON.stringify(request),
        headers: { 'x-request-id': 'same-2', 'x-scene': 'feed' },
      },
    ]);
    const expected = await app.get(RankService).rank('feed', { ...request, requestId: 'x' });
    for (const requestId of ['same-1', 'same-2']) {
      const [record] = await eventually(`the result of ${requestId}`, () => results.get(requestId));
      expect(record.key).toBe(requestId);
      expect(record.headers['x-status']).toBe('200');
      const body = json(record);
      expect(Object.keys(body)).toEqual([
        'requestId',
        'scene',
        'version',
        'arm',
        'degraded',
        'items',
      ]);
      expect(body).toMatchObject({
        requestId,
        scene: 'feed',
        version: 'v1',
        arm: 'stable',
        degraded: false,
      });
      // Batch composition may move the last float bits; the ranking is the same.
      const scores = new Map(expected.items.map((item) => [item.id, item.score]));
      expect(body.items.map((i: { id: string }) => i.id).sort()).toEqual([...scores.keys()].sort());
      for (const item of body.items) expect(item.score).toBeCloseTo(scores.get(item.id)!, 5);
    }
  });

  it('turns 10,000 requests into 10,000 results, every requestId present, offsets committed', async () => {
    const { topics, tally, app } = spec;
    const N = 10_000;
    const before = await metric(app, 'ranker_batch_requests_total', 'outcome="ok"');
    const recordsBefore = await metric(app, 'ranker_batch_produced_records_total');
    const producesBefore = await metric(app, 'ranker_batch_produce_requests_total');
    const ids = Array.from({ length: N }, (_, n) => `r${n}`);
    await topics.produce(Array.from({ length: N }, (_, n) => rankRequest(n, 3)));
    await eventually(
      `${N} results (missing ${tally.missing(ids).length})`,
      () => (tally.missing(ids).length === 0 ? true : undefined),
      150_000,
    );
    expect(tally.missing(ids)).toEqual([]);
    expect(tally.duplicates).toBe(0);
    const { committed, end } = await eventually('offsets committed to the end', async () => {
      const progress = await topics.progress();
      return progress.committed === progress.end ? progress : undefined;
    });
    expect(committed).toBe(end);
    expect((await metric(app, 'ranker_batch_requests_total', 'outcome="ok"')) - before).toBe(N);
    expect(await metric(app, 'ranker_batch_rows_total')).toBeGreaterThanOrEqual(3 * N);
    expect(await metric(app, 'ranker_batch_consumer_lag')).toBe(0);
    // One result a request, results of many requests a produce request (a request leaves at most
    // every BATCH_PRODUCE_LINGER_MS plus a round trip, so N / 2 holds unless the run takes minutes).
    expect((await metric(app, 'ranker_batch_produced_records_total')) - recordsBefore).toBe(N);
    const produces = (await metric(app, 'ranker_batch_produce_requests_total')) - producesBefore;
    expect(produces).toBeGreaterThan(0);
    expect(produces).toBeLessThan(N / 2);
  }, 200_000);

  it('dead-letters every kind of bad message with its reason and origin, and the partition moves on', async () => {
    const { topics, results, dead, app } = spec;
    const good = (id: string) => ({
      value: JSON.stringify({
        requestId: id,
        scene: 'feed',
        user: { id: 'u1' },
        candidates: [{ id: 'i1' }],
      }),
    });
    const sent: (Message & { reason?: RegExp | string })[] = [
      { key: 'good-first', ...good('dl-good-1') },
      {
        key: 'empty',
        value: null,
        headers: { 'x-request-id': 'dl-empty' },
        reason: 'empty message value',
      },
      { key: 'not-json', value: '{"requestId":"dl-x",', reason: /^not JSON \(/ },
      {
        key: 'array',
        value: '[1,2]',
        headers: { 'x-request-id': 'dl-array', 'x-scene': 'feed' },
        reason: 'the body must be a JSON object',
      },
      {
        key: 'invalid',
        value: JSON.stringify({
          requestId: 'dl-invalid',
          scene: 'feed',
          user: { id: 'u1' },
          candidates: [{ id: 'a' }, { id: 'a' }],
        }),
        reason: "invalid request: candidates[1].id: duplicate id 'a' (first at candidates[0])",
      },
      {
        key: 'no-id',
        value: JSON.stringify({ scene: 'feed', user: { id: 'u1' }, candidates: [{ id: 'i1' }] }),
        reason: 'invalid request: requestId: is required (in the value or the x-request-id header)',
      },
      {
        key: 'unknown-scene',
        value: JSON.stringify({
          requestId: 'dl-unknown',
          scene: 'nope',
          user: { id: 'u1' },
          candidates: [{ id: 'i1' }],
        }),
        reason: "unknown scene 'nope'",
      },
      {
        key: 'mismatch',
        value: JSON.stringify({
          requestId: 'dl-mismatch',
          scene: 'feed',
          user: { id: 'u1' },
          candidates: [{ id: 'i1' }],
        }),
        headers: { 'x-request-id': 'other', trace: 't-1' },
        reason: 'invalid request: requestId: differs from the x-request-id header ("other")',
      },
      // Not JSON and over the DLQ's 20 kB: the broker refuses its dead letter for good.
      { key: 'too-large', value: 'x'.repeat(30_000) },
      { key: 'good-last', ...good('dl-good-2') },
    ];
    const dropsBefore = await metric(
      app,
      'ranker_batch_records_refused_total',
      `topic="${topics.dlq}"`,
    );
    const [{ baseOffset }] = await topics.producer.send({
      topic: topics.input,
      acks: -1,
      messages: sent.map(({ key, value, headers }) => ({ key, value, headers, partition: 0 })),
    });
    const offsetOf = (i: number) => String(Number(baseOffset) + i);
    const refused = sent.map((m, i) => ({ ...m, offset: offsetOf(i) })).filter((m) => m.reason);

    const letters = await eventually('the dead letters', () => {
      const mine = dead.filter((d) => refused.some((r) => r.key === d.key));
      return mine.length === refused.length ? mine : undefined;
    });
    // Once each: the refused dead letter among them (too large) made the first send fail.
    expect(letters.map((d) => d.key).sort()).toEqual(refused.map((r) => r.key).sort());
    for (const expected of refused) {
      const letter = letters.find((d) => d.key === expected.key)!;
      expect(letter.value?.toString() ?? null).toBe(expected.value);
      const headers = letter.headers;
      if (expected.reason instanceof RegExp)
        expect(headers[DEAD_LETTER_HEADERS.reason]).toMatch(expected.reason);
      else expect(headers[DEAD_LETTER_HEADERS.reason]).toBe(expected.reason);
      expect(headers[DEAD_LETTER_HEADERS.topic]).toBe(topics.input);
      expect(headers[DEAD_LETTER_HEADERS.partition]).toBe('0');
      expect(headers[DEAD_LETTER_HEADERS.offset]).toBe(expected.offset);
      for (const [name, value] of Object.entries(expected.headers ?? {}))
        expect(headers[name]).toBe(value);
    }
    // The callers that said who they are hear about it with the REST error body.
    const errors: Record<string, [string, string, string]> = {
      'dl-empty': ['400', 'MALFORMED_JSON', 'body'],
      'dl-array': ['400', 'REQUEST_INVALID', 'body'],
      'dl-invalid': ['400', 'REQUEST_INVALID', 'candidates[1].id'],
      'dl-unknown': ['404', 'SCENE_NOT_FOUND', 'scene'],
      'dl-mismatch': ['400', 'REQUEST_INVALID', 'requestId'],
    };
    for (const [requestId, [status, code, path]] of Object.entries(errors)) {
      const [record] = await eventually(`the error result of ${requestId}`, () =>
        results.get(requestId),
      );
      expect(record.headers['x-status']).toBe(status);
      const body = json(record);
      expect(body).toMatchObject({ code, requestId });
      expect(body.details[0].path).toBe(path);
    }
    expect(results.has('dl-x')).toBe(false);
    // Nothing behind the bad ones waited: the last good one is answered, the partition committed.
    for (const id of ['dl-good-1', 'dl-good-2'])
      expect((await eventually(id, () => results.get(id)))[0].headers['x-status']).toBe('200');
    await eventually('partition 0 committed to its end', async () => {
      const progress = await topics.progress();
      return progress.committed === progress.end ? true : undefined;
    });
    expect(
      (await metric(app, 'ranker_batch_records_refused_total', `topic="${topics.dlq}"`)) -
        dropsBefore,
    ).toBe(1);
    for (const reason of ['empty_value', 'not_json', 'invalid_request', 'unknown_scene'])
      expect(
        await metric(app, 'ranker_batch_dead_letters_total', `reason="${reason}"`),
      ).toBeGreaterThan(0);
  }, 60_000);

  it('serves its metrics: requests, rows, dead letters, in flight, flow control, lag', async () => {
    const text = await metricsText(spec.app);
    for (const name of [
      'ranker_batch_requests_total',
      'ranker_batch_rows_total',
      'ranker_batch_dead_letters_total',
      'ranker_batch_in_flight_requests',
      'ranker_batch_in_flight_rows',
      'ranker_batch_flow_control_total',
      'ranker_batch_paused',
      'ranker_batch_consumer_lag',
      'ranker_batch_produce_requests_total',
      'ranker_batch_produced_records_total',
      'ranker_scoring_rows_total',
      'nodejs_heap_size_used_bytes',
    ])
      expect(text).toContain(`# TYPE ${name} `);
    const port = spec.app.get(MetricsServer).port;
    expect((await fetch(`http://127.0.0.1:${port}/health/ready`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/health/live`)).status).toBe(200);
  });
});

describe('batch scorer: records the broker refuses for good', () => {
  let spec: Awaited<ReturnType<typeof setUp>>;

  beforeAll(async () => {
    spec = await setUp('e2e-refused', {
      partitions: 1,
      outputConfig: [{ name: 'max.message.bytes', value: '20000' }],
    });
  }, 120_000);

  afterAll(async () => {
    await spec?.app.close();
    await spec?.topics.close();
  });

  it('answers a result too large for the output topic with a small error result, and moves on', async () => {
    const { topics, results, app } = spec;
    await topics.produce([
      rankRequest(1, 2000, { requestId: 'huge', topK: 2000 }),
      rankRequest(2, 3, { requestId: 'after' }),
    ]);
    const [record] = await eventually('the replacement of the huge result', () =>
      results.get('huge'),
    );
    expect(record.headers['x-status']).toBe('500');
    expect(json(record)).toMatchObject({ code: 'RESULT_UNDELIVERABLE', requestId: 'huge' });
    expect(json(record).details[0].path).toBe('topK');
    expect(
      (await eventually('the next result', () => results.get('after')))[0].headers['x-status'],
    ).toBe('200');
    expect(
      await metric(app, 'ranker_batch_records_refused_total', 'reason="MESSAGE_TOO_LARGE"'),
    ).toBe(1);
  }, 60_000);
});

describe('batch scorer: a request larger than a model queue (maxQueueRows)', () => {
  const QUEUE_ROWS = 64;
  let bundles: string;
  let spec: Awaited<ReturnType<typeof setUp>>;

  beforeAll(async () => {
    bundles = await mkdtemp(join(tmpdir(), 'batch-too-large-'));
    await writeVersion(bundles, 'feed', 'v1', {
      edit: (yaml) => (yaml.models.ctr.batching = { maxQueueRows: QUEUE_ROWS }),
    });
    spec = await setUp('e2e-too-large', { partitions: 1 }, { BUNDLES_DIR: bundles });
  }, 120_000);

  afterAll(async () => {
    await spec?.app.close();
    await spec?.topics.close();
    await rm(bundles, { recursive: true, force: true });
  });

  it('answers it with a 413 result and a dead letter at once, and the partition moves on', async () => {
    const { topics, results, dead, app } = spec;
    const tooLarge = rankRequest(1, QUEUE_ROWS + 1, { requestId: 'too-large' });
    await topics.produce([tooLarge, rankRequest(2, 3, { requestId: 'next' })]);
    const [record, ...again] = await eventually('the result of too-large', () =>
      results.get('too-large'),
    );
    expect(again).toEqual([]);
    expect(record.headers['x-status']).toBe('413');
    const limit = `scene feed version v1 takes at most ${QUEUE_ROWS} candidates per request (models.ctr.batching.maxQueueRows)`;
    expect(json(record)).toEqual({
      code: 'REQUEST_TOO_LARGE',
      message: `${QUEUE_ROWS + 1} candidates, but ${limit}`,
      details: [{ path: 'candidates', message: `${limit}, got ${QUEUE_ROWS + 1}` }],
      requestId: 'too-large',
    });
    const [letter] = await eventually('its dead letter', () => (dead.length ? dead : undefined));
    expect(letter.value?.toString()).toBe(tooLarge.value);
    expect(letter.headers[DEAD_LETTER_HEADERS.reason]).toBe(
      `request too large: ${QUEUE_ROWS + 1} candidates, but ${limit}`,
    );
    expect(letter.headers[DEAD_LETTER_HEADERS.topic]).toBe(topics.input);
    // The next message on the same partition is ranked, and the partition is committed past both.
    const [next] = await eventually('the next result', () => results.get('next'));
    expect(next.headers['x-status']).toBe('200');
    await eventually('the partition committed to its end', async () => {
      const progress = await topics.progress();
      return progress.committed === progress.end ? true : undefined;
    });
    expect(await metric(app, 'ranker_batch_dead_letters_total', 'reason="too_large"')).toBe(1);
    expect(await metric(app, 'ranker_batch_retries_total')).toBe(0);
    expect(dead).toHaveLength(1);
  }, 60_000);
});
