/**
 * Event-loop slices on the HTTP rank path (RANK_LOOP_SLICE_MS): a burst of concurrent requests
 * whose steps become ready together is spread over several loop turns, and that changes nothing
 * in the answers. The ranker app (in-memory features, the example bundle) with a 1 ms slice takes
 * 24 concurrent 2,000-candidate requests: steps are held for later turns (counted in
 * ranker_rank_loop_yields_total), and every request is answered 200 with exactly the ranking it
 * gets when sent alone. (That timers fire between held steps is LoopSlicer's unit spec.)
 */
import { RankerClient } from './ranker-client';

const CONCURRENT = 24;
const CANDIDATES = 2000;

const body = (n: number) => ({
  user: { id: `u${(n % 50) + 1}` },
  context: { hour: n % 24 },
  candidates: Array.from({ length: CANDIDATES }, (_, i) => ({
    id: `i${((i * 7 + n) % 5000) + 1}`,
  })),
  topK: 50,
});

async function yields(ranker: RankerClient): Promise<number> {
  let total = 0;
  for (const stage of ['start', 'fetched', 'scored'])
    total += await ranker.metric(`ranker_rank_loop_yields_total{stage="${stage}"}`);
  return total;
}

describe('rank API: event-loop slices', () => {
  let ranker: RankerClient;

  beforeAll(async () => {
    ranker = await RankerClient.start({ BUNDLES_POLL_INTERVAL_MS: '0', RANK_LOOP_SLICE_MS: '1' });
  });

  afterAll(async () => {
    await ranker?.close();
  });

  it('spreads a burst over loop turns and answers each request as if it came alone', async () => {
    const alone: unknown[] = [];
    for (let n = 0; n < CONCURRENT; n++) {
      const reply = await ranker.rank('feed', body(n));
      expect(reply.status).toBe(200);
      alone.push(reply.body.items);
    }
    const before = await yields(ranker);
    const replies = await Promise.all(
      Array.from({ length: CONCURRENT }, (_, n) => ranker.rank('feed', body(n))),
    );
    replies.forEach((reply, n) => {
      expect(reply.status).toBe(200);
      expect(reply.body.items).toEqual(alone[n]);
    });
    expect((await yields(ranker)) - before).toBeGreaterThan(0);
  });
});
