/**
 * Batch scoring scaled out by partitions, with real worker processes (apps/batch-scorer/src/main.ts)
 * in one consumer group on the real broker: two workers share the partitions and a third joins
 * mid-stream; a worker killed with SIGKILL mid-stream and restarted; a worker stopped with SIGTERM
 * mid-stream. In every case each request gets a result (duplicates are allowed: at-least-once,
 * readers drop them by requestId). Each test has its own topics and group.
 */
import { AssignerProtocol } from 'kafkajs';
import { setTimeout as sleep } from 'node:timers/promises';
import { BatchScorerProcess } from '../support/batch-scorer-process';
import { eventually } from '../support/eventually';
import { RankTopics, rankRequest, ResultTally } from '../support/rank-topics';

const CANDIDATES = 20;

/** Worker settings: a short session so a killed worker's partitions move within seconds. */
const workerEnv = (topics: RankTopics) => ({
  ...topics.env(),
  BATCH_SESSION_TIMEOUT_MS: '6000',
  BATCH_SHUTDOWN_GRACE_MS: '15000',
  // Three workers share two cores: one inference thread per model each.
  SCORING_DEFAULT_INSTANCES: '1',
  SCORING_MAX_CONCURRENT_BATCHES: '1',
});

/** The group's members and the input partitions each owns. */
async function members(topics: RankTopics): Promise<number[][]> {
  const { groups } = await topics.admin.describeGroups([topics.group]);
  return groups[0].members.map((member) => {
    const decoded = AssignerProtocol.MemberAssignment.decode(member.memberAssignment);
    return [...(decoded?.assignment[topics.input] ?? [])].sort((a, b) => a - b);
  });
}

/** Produces requests r<from>.. in the background, `perTick` every 100 ms, until stopped. */
function stream(topics: RankTopics, from: number, perTick: number) {
  let next = from;
  let stopped = false;
  const running = (async () => {
    while (!stopped) {
      const batch = Array.from({ length: perTick }, (_, i) => rankRequest(next + i, CANDIDATES));
      await topics.produce(batch);
      next += perTick;
      await sleep(100);
    }
  })();
  return {
    get produced() {
      return next - from;
    },
    ids: () => Array.from({ length: next - from }, (_, i) => `r${from + i}`),
    stop: async () => {
      stopped = true;
      await running;
    },
  };
}

async function allResults(tally: ResultTally, ids: string[], timeoutMs = 120_000): Promise<void> {
  await eventually(
    `a result for each of ${ids.length} requests`,
    () => (tally.missing(ids).length === 0 ? true : undefined),
    timeoutMs,
  );
}

describe('batch scorer scaled out (worker processes, one group)', () => {
  let topics: RankTopics;
  let workers: BatchScorerProcess[] = [];
  let tally: ResultTally;

  beforeEach(async () => {
    const name = expect.getState().currentTestName?.split(' ').slice(-1)[0] ?? 'scale';
    topics = await RankTopics.create(`scale-${name}`.slice(0, 40), { partitions: 6 });
    tally = new ResultTally();
    await topics.read(topics.output, tally.add);
    workers = [];
  });

  afterEach(async () => {
    for (const worker of workers) if (worker.running) worker.kill('SIGKILL');
    await Promise.all(workers.map((w) => w.exited));
    await topics.close();
  });

  const start = async (name: string, ready = true) => {
    const worker = await BatchScorerProcess.start(workerEnv(topics), { name, ready });
    workers.push(worker);
    return worker;
  };

  it('shares the partitions between two workers, and a third joining mid-stream loses nothing', async () => {
    const [w1, w2] = await Promise.all([start('w1'), start('w2')]);
    const shares = await eventually('two members owning partitions', async () => {
      const owned = await members(topics);
      return owned.length === 2 && owned.every((p) => p.length > 0) ? owned : undefined;
    });
    expect(shares.flat().sort()).toEqual([0, 1, 2, 3, 4, 5]);

    const requests = stream(topics, 0, 100);
    await eventually('results flowing', () => (tally.total > 200 ? true : undefined));
    const w3 = await start('w3');
    await eventually('three members owning partitions', async () => {
      const owned = await members(topics);
      return owned.length === 3 && owned.every((p) => p.length > 0) ? true : undefined;
    });
    // Keep the stream going after the rebalance, so w3 takes part in it.
    const atJoin = requests.produced;
    await eventually('more requests after the join', () =>
      requests.produced > atJoin + 1000 ? true : undefined,
    );
    await requests.stop();
    const ids = requests.ids();
    await allResults(tally, ids);
    expect(tally.missing(ids)).toEqual([]);
    for (const worker of [w1, w2, w3])
      expect(await worker.metric('ranker_batch_requests_total', 'outcome="ok"')).toBeGreaterThan(0);
  }, 240_000);

  it('loses nothing when a worker is killed with SIGKILL mid-stream and restarted', async () => {
    const [w1] = await Promise.all([start('w1'), start('w2')]);
    const N = 6000;
    await topics.produce(Array.from({ length: N }, (_, n) => rankRequest(n, CANDIDATES)));
    await eventually('w1 mid-stream', async () =>
      (await w1.metric('ranker_batch_requests_total')) > 300 ? true : undefined,
    );
    w1.kill('SIGKILL');
    expect((await w1.exited).signal).toBe('SIGKILL');
    expect(tally.counts.size).toBeLessThan(N); // really mid-stream
    await start('w1-restarted');
    const ids = Array.from({ length: N }, (_, n) => `r${n}`);
    await allResults(tally, ids);
    expect(tally.missing(ids)).toEqual([]);
    await eventually('every offset committed', async () => {
      const { committed, end } = await topics.progress();
      return committed === end ? true : undefined;
    });
  }, 240_000);

  it('lets a worker stopped with SIGTERM mid-stream finish, commit and leave; nothing is lost', async () => {
    const [w1, w2] = await Promise.all([start('w1'), start('w2')]);
    const N = 6000;
    await topics.produce(Array.from({ length: N }, (_, n) => rankRequest(n, CANDIDATES)));
    await eventually('w1 mid-stream', async () =>
      (await w1.metric('ranker_batch_requests_total')) > 300 ? true : undefined,
    );
    const signalledAt = Date.now();
    const exit = await w1.stop();
    expect(tally.counts.size).toBeLessThan(N); // really mid-stream
    const tookMs = Date.now() - signalledAt;
    expect(exit.code === 0 || exit.signal === 'SIGTERM').toBe(true);
    expect(tookMs).toBeLessThan(15_000);
    expect(w1.logText()).toMatch(/stopped: in-flight requests finished, committed, left the group/);
    // It left the group: its partitions move at once, not after the session timeout.
    const owned = await eventually(
      'w2 alone owning every partition',
      async () => {
        const m = await members(topics);
        return m.length === 1 && m[0].length === 6 ? m : undefined;
      },
      5_000,
    );
    expect(owned).toEqual([[0, 1, 2, 3, 4, 5]]);
    const ids = Array.from({ length: N }, (_, n) => `r${n}`);
    await allResults(tally, ids);
    expect(tally.missing(ids)).toEqual([]);
    // What w1 produced before leaving was committed: w2 ranked none of it again.
    expect(tally.duplicates).toBe(0);
    expect(await w2.metric('ranker_batch_requests_total')).toBeGreaterThan(0);
  }, 240_000);
});
