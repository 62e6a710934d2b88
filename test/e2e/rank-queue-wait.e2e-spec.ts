/**
 * The queue-wait bound over HTTP (`SCORING_MAX_QUEUE_WAIT_MS`): while the oldest rows waiting in
 * a model's queue have waited longer than the bound, a rank call is refused with 503 OVERLOADED
 * before any work, and what was taken is still answered. The ranker app runs in this process on a
 * copy of the example bundle whose ctr model has one instance and batches of 64 rows, so a request
 * of 5,000 candidates keeps rows in ctr's queue for dozens of batches. Batches leave only from the
 * event loop's turns, and the app shares this process's loop: holding it for longer than the
 * bound makes the queue's oldest rows late by construction, not by the machine's speed.
 */
import { ScoringEngine } from '@app/scoring';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeVersion } from '../support/bundle-versions';
import { RankerClient } from './ranker-client';

const BOUND_MS = 20;

const body = (candidates: number, from = 1) => ({
  user: { id: 'u1' },
  candidates: Array.from({ length: candidates }, (_, i) => ({ id: `i${1 + ((from + i) % 5000)}` })),
  topK: 3,
});

/** Holds this thread (and so the app's event loop) for `ms`. */
function hold(ms: number): void {
  for (const until = performance.now() + ms; performance.now() < until;);
}

describe('rank API with a queue-wait bound', () => {
  let root: string;
  let ranker: RankerClient;
  const refusals = (reason: string) =>
    ranker.metric(
      `ranker_scoring_rejections_total{model="feed/ctr",version="v1",reason="${reason}"}`,
    );

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'rank-queue-wait-'));
    await writeVersion(root, 'feed', 'v1', {
      edit: (yaml) => {
        yaml.models.ctr.instances = 1;
        yaml.models.ctr.batching = { maxBatchRows: 64 };
      },
    });
    ranker = await RankerClient.start({
      BUNDLES_DIR: root,
      BUNDLES_POLL_INTERVAL_MS: '0',
      SCORING_MAX_QUEUE_WAIT_MS: String(BOUND_MS),
    });
  }, 60_000);

  afterAll(async () => {
    await ranker?.close();
    await rm(root, { recursive: true, force: true });
  });

  it('refuses with 503 OVERLOADED while queued rows are late, answers what it took, then takes calls again', async () => {
    const engine = ranker.app.get(ScoringEngine);
    const large = ranker.rank('feed', body(5000));
    // Polled every turn, not every 100 ms: on a fast machine the request is over in tens of ms.
    for (const until = Date.now() + 30_000; engine.queueDepth().queuedRows === 0;) {
      if (Date.now() > until) throw new Error('the large request never queued');
      await new Promise((resolve) => setImmediate(resolve));
    }
    // The call below is written and read only once the loop turns again, past the bound.
    const refused = ranker.rank('feed', body(1, 7));
    hold(3 * BOUND_MS);
    const answer = await refused;
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(answer.body.code).toBe('OVERLOADED');
    expect(answer.body.message).toMatch(
      /^model feed\/v1\/ctr: the oldest queued rows have waited \d+ ms, past maxQueueWaitMs 20$/,
    );
    const taken = await large;
    expect(taken.status).toBe(200);
    expect(taken.body.items).toHaveLength(3);
    expect(await refusals('queue_wait')).toBe(1);
    expect(await refusals('overloaded')).toBe(0);
    // Nothing waits now: a call is taken, whatever the bound.
    const next = await ranker.rank('feed', body(10, 100));
    expect(next.status).toBe(200);
    expect(await refusals('queue_wait')).toBe(1);
  });
});
