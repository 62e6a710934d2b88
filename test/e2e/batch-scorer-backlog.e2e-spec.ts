/**
 * Backpressure under a backlog far larger than the engine's queue: ~200 MB of rank requests
 * (1,300 messages of ~155 kB, 300 candidates each: 390,000 rows) wait in the topic at once for a
 * worker process whose models may queue only 1,024 rows each (a copy of the feed bundle with
 * `maxQueueRows: 1024`). The consumer pauses its partitions when the queue nears
 * full and resumes as it drains, and every request gets its result, while the worker runs with
 * its V8 heap capped at 160 MiB (`--max-old-space-size`; ~90 MB of it is live at boot; the young
 * generation, 2 x 64 MiB as in production, comes beside it), under the backlog's size: a worker
 * that held what it had fetched, or fetched ahead of the engine, would die of it. Its heap and
 * RSS, sampled from its own /metrics, stay bounded the whole time.
 *
 * The backlog is produced while the worker is stopped (SIGSTOP, 7-8 s here: inside its 30 s
 * session timeout; bench:batch does the same), and it drains it once continued. Produced while it
 * ran, the backlog's peak depended on which of the producer and the worker the two cores favoured:
 * 842 and 898 messages at once in two whole `npm test` runs, 624 in a third, where the check that
 * most of it waited at once failed.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse, stringify } from 'yaml';
import { BatchScorerProcess } from '../support/batch-scorer-process';
import { eventually } from '../support/eventually';
import { RankTopics, rankRequest, ResultTally } from '../support/rank-topics';

const repoRoot = resolve(__dirname, '..', '..');
const MESSAGES = 1300;
const CANDIDATES = 300;
const PADDING = 150_000;
const QUEUE_ROWS = 1024;
const HEAP_MB = 160;

/** The feed bundle with a small batching queue per model. */
function smallQueueBundles(): string {
  const root = mkdtempSync(join(tmpdir(), 'batch-backlog-'));
  const dir = join(root, 'feed', 'v1');
  cpSync(join(repoRoot, 'models/feed/v1'), dir, { recursive: true });
  const yaml = parse(readFileSync(join(dir, 'pipeline.yaml'), 'utf8')) as {
    models: Record<string, { batching?: Record<string, unknown> }>;
  };
  for (const model of Object.values(yaml.models))
    model.batching = { ...model.batching, maxQueueRows: QUEUE_ROWS };
  writeFileSync(join(dir, 'pipeline.yaml'), stringify(yaml));
  return root;
}

describe('batch scorer under a backlog far larger than the engine queue', () => {
  let topics: RankTopics;
  let bundles: string;
  let worker: BatchScorerProcess | undefined;

  beforeAll(async () => {
    bundles = smallQueueBundles();
    topics = await RankTopics.create('backlog', { partitions: 4 });
  });

  afterAll(async () => {
    if (worker?.running) worker.kill('SIGKILL');
    await worker?.exited;
    await topics?.close();
    rmSync(bundles, { recursive: true, force: true });
  });

  it('pauses and resumes on the engine queue, answers every request, and keeps its heap bounded', async () => {
    const tally = new ResultTally();
    await topics.read(topics.output, tally.add);
    worker = await BatchScorerProcess.start(
      {
        ...topics.env(),
        BUNDLES_DIR: bundles,
        // Only the engine's queue holds the worker back here, not its own in-flight limits.
        BATCH_MAX_IN_FLIGHT_ROWS: '1000000',
      },
      { nodeArgs: [`--max-old-space-size=${HEAP_MB}`] },
    );
    const idleRss = await worker.metric('process_resident_memory_bytes');
    const ids = Array.from({ length: MESSAGES }, (_, n) => `r${n}`);
    let peakHeap = 0;
    let peakRss = 0;
    let peakBacklog = 0;
    let samples = 0;
    let done = false;
    // Produced while the worker is stopped: the whole backlog builds up in the topic.
    let backlogBytes = 0;
    const padding = 'p'.repeat(PADDING);
    const stoppedAt = Date.now();
    worker.kill('SIGSTOP');
    try {
      for (let from = 0; from < MESSAGES; from += 5) {
        const chunk = Array.from({ length: 5 }, (_, i) =>
          rankRequest(from + i, CANDIDATES, { context: { hour: 3, page: padding } }),
        );
        for (const m of chunk) backlogBytes += Buffer.byteLength(m.value as string);
        await topics.produce(chunk);
      }
    } finally {
      worker.kill('SIGCONT');
    }
    const stoppedMs = Date.now() - stoppedAt;
    // Sampled only once it runs: a /metrics read sent while it is stopped can be reset when it
    // continues (its server's keep-alive timer, 5 s, has expired by then and closes the socket
    // before reading the request; one CI run failed so). It allocates nothing while stopped.
    const sampling = (async () => {
      for (const until = Date.now() + 240_000; !done; await sleep(100)) {
        if (Date.now() > until) throw new Error(`${tally.missing(ids).length} results missing`);
        if (!worker!.running) throw new Error(`the worker died:\n${worker!.logText()}`);
        peakHeap = Math.max(peakHeap, await worker!.metric('nodejs_heap_size_used_bytes'));
        peakRss = Math.max(peakRss, await worker!.metric('process_resident_memory_bytes'));
        const { committed, end } = await topics.progress();
        peakBacklog = Math.max(peakBacklog, end - committed);
        samples++;
      }
    })();
    await eventually(
      'every result',
      () => (tally.missing(ids).length === 0 ? true : undefined),
      240_000,
    );
    done = true;
    await sampling;
    const retried = await worker.metric('ranker_batch_retries_total');
    const overloaded = await worker.metric('ranker_batch_retries_total', 'code="OVERLOADED"');
    process.stdout.write(
      `backlog ${(backlogBytes / 1e6).toFixed(0)} MB, ${MESSAGES * CANDIDATES} rows, ` +
        `up to ${peakBacklog} messages waiting (produced in ${stoppedMs} ms, worker stopped); ` +
        `worker heap peak ${(peakHeap / 1e6).toFixed(0)} MB (cap ${HEAP_MB} MiB), ` +
        `RSS ${(idleRss / 1e6).toFixed(0)} MB idle, ${(peakRss / 1e6).toFixed(0)} MB peak, ${samples} samples; ` +
        `${await worker.metric('ranker_batch_flow_control_total', 'event="pause"')} pauses, ` +
        `${retried} retries (${overloaded} overloaded)\n`,
    );
    expect(tally.missing(ids)).toEqual([]);
    // Held back before the queue, never refused by it (the feature store is in-process here).
    expect(overloaded).toBe(0);
    expect(samples).toBeGreaterThan(10);
    expect(worker.running).toBe(true);
    // Bounded: fetches and the requests in flight, never the backlog.
    expect(backlogBytes).toBeGreaterThan(HEAP_MB * 2 ** 20 * 1.15);
    expect(peakBacklog).toBeGreaterThan(MESSAGES / 2); // most of it waited in the topic at once
    expect(peakHeap).toBeLessThan(HEAP_MB * 2 ** 20);
    // Off the V8 heap too (fetched buffers): the process grew by less than the backlog.
    expect(peakRss - idleRss).toBeLessThan(backlogBytes);
    expect(await worker.metric('ranker_batch_flow_control_total', 'event="pause"')).toBeGreaterThan(
      0,
    );
    expect(
      await worker.metric('ranker_batch_flow_control_total', 'event="resume"'),
    ).toBeGreaterThan(0);
    await eventually('the worker resumed and idle', async () =>
      (await worker!.metric('ranker_batch_paused')) === 0 &&
      (await worker!.metric('ranker_batch_in_flight_requests')) === 0
        ? true
        : undefined,
    );
  }, 300_000);
});
