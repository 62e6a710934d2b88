/**
 * A request larger than a model's queue (its bundle's `batching.maxQueueRows`) over HTTP: the
 * ranker app on a copy of the example bundle whose ctr model queues at most 64 rows, with
 * RANK_MAX_CANDIDATES at 100. 65-100 candidates can never be scored: each is a 413
 * REQUEST_TOO_LARGE naming `candidates`, the limit and the setting, at once and every time (not a
 * 503 to retry, not a 500); more than 100 stays the request rule's 400; up to 64 are ranked, also
 * while the oversized ones arrive.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeVersion } from '../support/bundle-versions';
import { RankerClient } from './ranker-client';

const QUEUE_ROWS = 64;
const MAX_CANDIDATES = 100;

const body = (candidates: number) => ({
  user: { id: 'u1' },
  candidates: Array.from({ length: candidates }, (_, i) => ({ id: `i${i + 1}` })),
  topK: 3,
});

describe('rank API: more candidates than a model queue holds', () => {
  let root: string;
  let ranker: RankerClient;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'rank-too-large-'));
    await writeVersion(root, 'feed', 'v1', {
      edit: (yaml) => (yaml.models.ctr.batching = { maxQueueRows: QUEUE_ROWS }),
    });
    ranker = await RankerClient.start({
      BUNDLES_DIR: root,
      BUNDLES_POLL_INTERVAL_MS: '0',
      RANK_MAX_CANDIDATES: String(MAX_CANDIDATES),
    });
  });

  afterAll(async () => {
    await ranker?.close();
    await rm(root, { recursive: true, force: true });
  });

  it('answers 413 REQUEST_TOO_LARGE naming candidates, the limit and the bundle setting', async () => {
    const reply = await ranker.rank('feed', body(QUEUE_ROWS + 1));
    expect(reply.status).toBe(413);
    expect(reply.headers.get('retry-after')).toBeNull();
    const limit = `scene feed version v1 takes at most ${QUEUE_ROWS} candidates per request (models.ctr.batching.maxQueueRows)`;
    expect(reply.body).toEqual({
      code: 'REQUEST_TOO_LARGE',
      message: `${QUEUE_ROWS + 1} candidates, but ${limit}`,
      details: [{ path: 'candidates', message: `${limit}, got ${QUEUE_ROWS + 1}` }],
      requestId: reply.headers.get('x-request-id'),
    });
  });

  it('keeps the request rule (RANK_MAX_CANDIDATES) a 400, and ranks a request that fits', async () => {
    const over = await ranker.rank('feed', body(MAX_CANDIDATES + 1));
    expect(over.status).toBe(400);
    expect(over.body.code).toBe('REQUEST_INVALID');
    expect(over.body.details[0].path).toBe('candidates');
    const fits = await ranker.rank('feed', body(QUEUE_ROWS));
    expect(fits.status).toBe(200);
    expect(fits.body.items).toHaveLength(3);
  });

  it('refuses every oversized request of a burst the same way, counts them, and ranks the rest', async () => {
    const before = await ranker.metric('ranker_rank_too_large_total{scene="feed",version="v1"}');
    // The small ones together (at most 60 rows) fit the queue: none of them is overloaded.
    const sizes = Array.from({ length: 40 }, (_, i) =>
      i % 2 ? QUEUE_ROWS + 1 + (i % (MAX_CANDIDATES - QUEUE_ROWS)) : 1 + (i % 3),
    );
    const replies = await Promise.all(sizes.map((n) => ranker.rank('feed', body(n))));
    const statuses = replies.map((r, i) => [sizes[i], r.status, r.body.code ?? 'ok']);
    expect(statuses).toEqual(
      sizes.map((n) => (n > QUEUE_ROWS ? [n, 413, 'REQUEST_TOO_LARGE'] : [n, 200, 'ok'])),
    );
    const refused = sizes.filter((n) => n > QUEUE_ROWS).length;
    expect(
      (await ranker.metric('ranker_rank_too_large_total{scene="feed",version="v1"}')) - before,
    ).toBe(refused);
  });
});
