import {
  DeadlineExceededError,
  OutgoingRecord,
  OverloadedError,
  RequestTooLargeError,
  SceneNotFoundError,
  WorkerCrashedError,
} from '@app/common';
import { PipelineConfig, RankRequest, RankResult, RankService } from '@app/pipeline';
import type { KafkaMessage } from 'kafkajs';
import { Registry } from 'prom-client';
import { BatchScorerConfig } from '../batch-scorer.config';
import { BatchScorerMetrics } from '../batch-scorer.metrics';
import { RankMessageHandler } from './rank-message.handler';

/** The handler's mapping of rank outcomes to records, with RankService answering as told. */
function setUp(answer: (scene: string, request: RankRequest) => Promise<RankResult>) {
  const ranker = { rank: answer } as unknown as RankService;
  const config = new BatchScorerConfig();
  const registry = new Registry();
  const handler = new RankMessageHandler(
    ranker,
    new PipelineConfig(),
    config,
    new BatchScorerMetrics(registry),
  );
  const run = (value: unknown) => {
    const message = {
      key: Buffer.from('k'),
      value: Buffer.from(JSON.stringify(value)),
      headers: {},
      offset: '42',
      timestamp: '0',
      attributes: 0,
    } as KafkaMessage;
    return handler.handle(message, 'in', 3).run();
  };
  const metric = async (name: string) => (await registry.getSingleMetricAsString(name)).split('\n');
  return { handler, config, run, metric };
}

const request = { requestId: 'r1', scene: 'feed', user: { id: 'u1' }, candidates: [{ id: 'i1' }] };
const ok: RankResult = {
  scene: 'feed',
  version: 'v1',
  arm: 'stable',
  degraded: false,
  items: [{ id: 'i1', score: 0.5 }],
};
const body = (r: OutgoingRecord) => JSON.parse(String(r.message.value));
const header = (r: OutgoingRecord, name: string) => String(r.message.headers?.[name]);

describe('RankMessageHandler', () => {
  it('produces the REST answer with the requestId, keyed by it, status 200', async () => {
    const { run, config } = setUp(async () => ok);
    const [result, ...rest] = await run(request);
    expect(rest).toEqual([]);
    expect(result.topic).toBe(config.BATCH_OUTPUT_TOPIC);
    expect(result.message.key).toBe('r1');
    expect(header(result, 'x-status')).toBe('200');
    expect(body(result)).toEqual({ requestId: 'r1', ...ok });
  });

  it('answers the caller’s own deadline with a 504 error result and no dead letter', async () => {
    const { run } = setUp(async () => {
      throw new DeadlineExceededError('deadline passed');
    });
    const records = await run({ ...request, timeoutMs: 1 });
    expect(records).toHaveLength(1);
    expect(header(records[0], 'x-status')).toBe('504');
    expect(body(records[0])).toEqual({
      code: 'DEADLINE_EXCEEDED',
      message: 'deadline passed',
      details: [],
      requestId: 'r1',
    });
  });

  it('answers an unknown scene with a 404 error result and dead-letters the message', async () => {
    const { run, config } = setUp(async (scene) => {
      throw new SceneNotFoundError(scene);
    });
    const [result, dead] = await run({ ...request, scene: 'nope' });
    expect(header(result, 'x-status')).toBe('404');
    expect(body(result).code).toBe('SCENE_NOT_FOUND');
    expect(dead.topic).toBe(config.BATCH_DLQ_TOPIC);
    expect(header(dead, 'x-dlq-reason')).toBe("unknown scene 'nope'");
    expect(header(dead, 'x-original-offset')).toBe('42');
    expect(header(dead, 'x-original-partition')).toBe('3');
  });

  it('answers a request larger than a model queue with a 413 result and dead-letters it, never retried', async () => {
    const tooLarge = new RequestTooLargeError('3 candidates, but at most 2', 'feed/v1/ctr', 3, 2, [
      { path: 'candidates', message: 'at most 2 (models.ctr.batching.maxQueueRows), got 3' },
    ]);
    const { run, config, metric } = setUp(async () => {
      throw tooLarge;
    });
    const [result, dead, ...rest] = await run(request);
    expect(rest).toEqual([]);
    expect(result.topic).toBe(config.BATCH_OUTPUT_TOPIC);
    expect(header(result, 'x-status')).toBe('413');
    expect(body(result)).toEqual({
      code: 'REQUEST_TOO_LARGE',
      message: '3 candidates, but at most 2',
      details: [
        { path: 'candidates', message: 'at most 2 (models.ctr.batching.maxQueueRows), got 3' },
      ],
      requestId: 'r1',
    });
    expect(dead.topic).toBe(config.BATCH_DLQ_TOPIC);
    expect(header(dead, 'x-dlq-reason')).toBe('request too large: 3 candidates, but at most 2');
    expect(await metric('ranker_batch_dead_letters_total')).toContain(
      'ranker_batch_dead_letters_total{reason="too_large"} 1',
    );
  });

  it.each([
    ['overloaded', new OverloadedError('full')],
    ['a worker replaced', new WorkerCrashedError('died')],
  ])('throws a 503 (%s) so the message is ranked again, never refused', async (_, error) => {
    const { run, metric } = setUp(async () => {
      throw error;
    });
    await expect(run(request)).rejects.toBe(error);
    expect((await metric('ranker_batch_requests_total')).filter((l) => l.endsWith(' 1'))).toEqual(
      [],
    );
  });

  it('answers a bug with a 500 INTERNAL result that tells nothing, and dead-letters the message', async () => {
    const { run } = setUp(async () => {
      throw new TypeError('x is undefined');
    });
    const [result, dead] = await run(request);
    expect(header(result, 'x-status')).toBe('500');
    expect(body(result)).toEqual({
      code: 'INTERNAL',
      message: 'internal error',
      details: [],
      requestId: 'r1',
    });
    expect(header(dead, 'x-dlq-reason')).toBe('rank failed: INTERNAL: internal error');
  });

  it('replaces a refused result by a small error result, and drops a refused dead letter', async () => {
    const { handler, config, run } = setUp(async () => ok);
    const [result] = await run(request);
    const replacement = handler.replaceRefused(result, 'MESSAGE_TOO_LARGE', new Error('too large'));
    expect(replacement?.topic).toBe(config.BATCH_OUTPUT_TOPIC);
    expect(replacement?.message.key).toBe('r1');
    expect(body(replacement!)).toMatchObject({ code: 'RESULT_UNDELIVERABLE', requestId: 'r1' });
    expect(
      handler.replaceRefused(replacement!, 'MESSAGE_TOO_LARGE', new Error('still')),
    ).toBeUndefined();
    const dead = { topic: config.BATCH_DLQ_TOPIC, message: { key: 'k', value: 'x' } };
    expect(
      handler.replaceRefused(dead, 'MESSAGE_TOO_LARGE', new Error('too large')),
    ).toBeUndefined();
  });
});
