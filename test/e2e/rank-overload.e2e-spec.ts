/**
 * Overload over HTTP: a refusal costs no work, and a request is scored by all of its models or by
 * none. The ranker app on a copy of the example bundle whose ctr model queues at most 64 rows and
 * holds a batch until 64 rows wait or HOLD_MS pass (mtl as in the example, a queue of 50,000 rows),
 * so requests of a few dozen candidates keep ctr's queue nearly full for HOLD_MS. Features in Redis
 * under a run-unique prefix that holds nothing (every feature takes its default), so that each
 * fetch is counted (`ranker_features_fetch_ms`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeVersion } from '../support/bundle-versions';
import { eventually } from '../support/eventually';
import { RankerClient, Reply } from './ranker-client';

const QUEUE_ROWS = 64;
const HOLD_MS = 1_500;

const body = (candidates: number, from = 1) => ({
  user: { id: 'u1' },
  candidates: Array.from({ length: candidates }, (_, i) => ({ id: `i${from + i}` })),
  topK: 3,
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('rank API under overload', () => {
  let root: string;
  let ranker: RankerClient;
  const fetches = () => ranker.metric('ranker_features_fetch_ms_count{result="ok"}');
  const rows = (model: string) =>
    ranker.metric(`ranker_scoring_rows_total{model="feed/${model}",version="v1"}`);

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'rank-overload-'));
    await writeVersion(root, 'feed', 'v1', {
      edit: (yaml) =>
        (yaml.models.ctr.batching = {
          maxQueueRows: QUEUE_ROWS,
          maxBatchRows: QUEUE_ROWS,
          maxQueueDelayMicros: HOLD_MS * 1000,
        }),
    });
    ranker = await RankerClient.start({
      BUNDLES_DIR: root,
      BUNDLES_POLL_INTERVAL_MS: '0',
      FEATURE_STORE: 'redis',
      FEATURES_REDIS_KEY_PREFIX: `rank-overload-${process.pid}-${Date.now()}:`,
      // The fetch deadline is for production latency; a loaded CI box must not turn reads degraded.
      FEATURES_FETCH_TIMEOUT_MS: '2000',
    });
  }, 60_000);

  afterAll(async () => {
    await ranker?.close();
    await rm(root, { recursive: true, force: true });
  });

  it('refuses with 503 OVERLOADED while a model queue is full, before fetching any feature', async () => {
    const before = await fetches();
    // 60 of ctr's 64 rows, held there for HOLD_MS.
    const held = ranker.rank('feed', body(60));
    await eventually('the held request fetched', async () =>
      (await fetches()) === before + 1 ? true : undefined,
    );
    await sleep(50);
    const refused = await ranker.rank('feed', body(10, 100));
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({
      code: 'OVERLOADED',
      message: 'model feed/v1/ctr: 60 rows queued, 10 more would pass 64',
    });
    // The refused request cost no feature fetch (nor, so, a tensor build).
    expect(await fetches()).toBe(before + 1);
    const answer = await held;
    expect(answer.status).toBe(200);
    expect(answer.body.items).toHaveLength(3);
  });

  it('scores a request on all of its models or on none: mtl scores no row of a request ctr refused', async () => {
    const before = { ctr: await rows('ctr'), mtl: await rows('mtl') };
    // 12 requests of 10 rows at once: ctr's queue takes 6 (60 rows), then holds them for HOLD_MS.
    const replies: Reply[] = await Promise.all(
      Array.from({ length: 12 }, (_, i) => ranker.rank('feed', body(10, 200 + 10 * i))),
    );
    const statuses = replies.map((r) => `${r.status} ${r.body.code ?? 'ok'}`);
    for (const status of statuses) expect(['200 ok', '503 OVERLOADED']).toContain(status);
    const answered = statuses.filter((s) => s === '200 ok').length;
    expect(answered).toBeGreaterThan(0);
    expect(answered).toBeLessThan(12);
    expect((await rows('ctr')) - before.ctr).toBe(10 * answered);
    expect((await rows('mtl')) - before.mtl).toBe(10 * answered);
  });
});
