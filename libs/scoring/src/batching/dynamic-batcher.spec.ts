/**
 * The batcher's policy against a fake pool (no workers, fake clock): when a batch is cut, how
 * large, on which kind of instance, and how split requests come back together.
 */
import { BatchingOptions } from '../model-options';
import { OutputTensors } from '../tensor-types';
import { MIN_SPLIT_ROWS } from './batch-size';
import { DynamicBatcher } from './dynamic-batcher';
import { FakeBatchPool, batchRows, flush, numberedFeeds, specBatching } from './fake-batch-pool';

const events = {
  dispatched: () => undefined,
  completed: () => undefined,
  rejected: () => undefined,
};

function setUp(instances: number, options: Partial<BatchingOptions> = {}) {
  const pool = new FakeBatchPool(instances);
  const batcher = new DynamicBatcher('m', specBatching(options), pool, events);
  let next = 0;
  /** Submits `rows` rows numbered after all earlier ones; resolves to the output's row numbers. */
  const submit = (rows: number) => {
    const from = next;
    next += rows;
    return batcher.submit(numberedFeeds(rows, from), rows).then(outputRows);
  };
  return { pool, batcher, submit, sizes: () => pool.batches.map((b) => b.rows) };
}

function outputRows(out: OutputTensors): number[] {
  return Array.from(out.x.data);
}

function range(from: number, rows: number): number[] {
  return Array.from({ length: rows }, (_, i) => from + i);
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

describe('DynamicBatcher policy (fake pool)', () => {
  describe('batch cuts', () => {
    it('sends a batch as soon as maxBatchRows rows wait, and gives each request its own rows', async () => {
      const { pool, submit, sizes } = setUp(1);
      const outs = [submit(25), submit(25), submit(25)];
      expect(sizes()).toEqual([]);
      outs.push(submit(25));
      expect(sizes()).toEqual([100]);
      pool.batches[0].succeed();
      expect(await Promise.all(outs)).toEqual([0, 25, 50, 75].map((from) => range(from, 25)));
    });

    it('sends a preferred size at once when the queue can fill it, the largest that fits', async () => {
      const { pool, submit, sizes } = setUp(1, { preferredBatchRows: [40, 60, 90] });
      const first = submit(30);
      expect(sizes()).toEqual([]);
      const second = submit(35);
      expect(sizes()).toEqual([60]);
      expect(batchRows(pool.batches[0])).toEqual(range(0, 60));
      pool.batches[0].succeed();
      await flush();
      expect(await first).toEqual(range(0, 30));
      // The 5 rows left wait again (no preferred size fits them, the delay is long).
      expect(sizes()).toEqual([60]);
      void second;
    });

    it('sends what waits once the oldest row has waited maxQueueDelayMicros', async () => {
      const { pool, submit, sizes } = setUp(1, { maxQueueDelayMicros: 5_000 });
      const out = submit(10);
      jest.advanceTimersByTime(3);
      const later = submit(7);
      jest.advanceTimersByTime(1);
      expect(sizes()).toEqual([]);
      jest.advanceTimersByTime(1);
      expect(sizes()).toEqual([17]);
      pool.batches[0].succeed();
      expect(await out).toEqual(range(0, 10));
      expect(await later).toEqual(range(10, 7));
    });
  });

  describe('splitting over idle instances', () => {
    it('splits a large request into balanced batches of at most maxBatchRows, reassembled in order', async () => {
      const { pool, submit, sizes } = setUp(3, { maxQueueDelayMicros: 0 });
      const out = submit(250);
      expect(sizes()).toEqual([84, 83, 83]);
      expect(pool.batches.map((b) => b.instance).sort()).toEqual([0, 1, 2]);
      // Answers arrive out of order; the request still gets its rows in order.
      for (const batch of [...pool.batches].reverse()) batch.succeed();
      expect(await out).toEqual(range(0, 250));
    });

    it('spreads a batch over idle instances, never below MIN_SPLIT_ROWS rows each', async () => {
      const { pool, submit, sizes } = setUp(4, { maxBatchRows: 1024, maxQueueDelayMicros: 0 });
      const big = submit(1000);
      expect(sizes()).toEqual([334, 333, 333]);
      expect(Math.min(...sizes())).toBeGreaterThanOrEqual(MIN_SPLIT_ROWS);
      for (const batch of pool.batches) batch.succeed();
      expect(await big).toEqual(range(0, 1000));
      // Fewer than 2 x MIN_SPLIT_ROWS rows are not worth splitting.
      const small = submit(2 * MIN_SPLIT_ROWS - 1);
      expect(sizes().slice(3)).toEqual([2 * MIN_SPLIT_ROWS - 1]);
      pool.batches[3].succeed();
      expect(await small).toEqual(range(1000, 2 * MIN_SPLIT_ROWS - 1));
    });

    it('takes a core slot per idle instance it starts and none for a batch queued behind', async () => {
      const { pool, submit } = setUp(2, { maxQueueDelayMicros: 0 });
      const outs = [submit(100), submit(100), submit(200), submit(200)];
      expect(pool.batches.map((b) => b.behind)).toEqual([false, false, true, true]);
      expect(pool.inUse).toBe(2);
      for (const batch of pool.batches) batch.succeed();
      await flush();
      for (const batch of pool.running) batch.succeed();
      await Promise.all(outs);
      expect(pool.inUse).toBe(0);
    });
  });

  describe('queueing behind a running instance', () => {
    it('queues a balanced batch behind the running one once a quarter of maxBatchRows waits', async () => {
      const { pool, submit, sizes } = setUp(1, { maxQueueDelayMicros: 0 });
      const outs = [submit(100), submit(20)];
      // 20 rows wait (under a quarter of maxBatchRows): they keep merging for the busy instance.
      expect(sizes()).toEqual([100]);
      outs.push(submit(130));
      // 150 wait: half of them (balanced, at most maxBatchRows) queue behind; 75 wait (load is 2).
      expect(pool.batches.map((b) => [b.rows, b.behind])).toEqual([
        [100, false],
        [75, true],
      ]);
      pool.batches[0].succeed();
      await flush();
      // The instance's queued batch runs; the 75 left queue behind it at once.
      expect(pool.batches.map((b) => [b.rows, b.behind])).toEqual([
        [100, false],
        [75, true],
        [75, true],
      ]);
      pool.batches[1].succeed();
      await flush();
      pool.batches[2].succeed();
      expect(await Promise.all(outs)).toEqual([range(0, 100), range(100, 20), range(120, 130)]);
    });

    it('queues nothing behind while fewer rows than a quarter of maxBatchRows wait', async () => {
      const { pool, submit, sizes } = setUp(1, { maxQueueDelayMicros: 0 });
      const outs = [submit(100), submit(10), submit(14)];
      expect(sizes()).toEqual([100]);
      pool.batches[0].succeed();
      await flush();
      // The instance is idle again: the 24 waiting rows leave as one batch.
      expect(pool.batches.map((b) => [b.rows, b.behind])).toEqual([
        [100, false],
        [24, false],
      ]);
      pool.batches[1].succeed();
      expect(await Promise.all(outs)).toEqual([range(0, 100), range(100, 10), range(110, 14)]);
    });
  });

  describe('batching disabled', () => {
    it('runs one request per batch, even when several would fit', async () => {
      const { pool, submit, sizes } = setUp(1, { enabled: false });
      const outs = [submit(30), submit(30), submit(30)];
      // One runs, one queues behind it (30 rows are over a quarter of maxBatchRows), one waits.
      expect(sizes()).toEqual([30, 30]);
      pool.batches[0].succeed();
      await flush();
      expect(sizes()).toEqual([30, 30, 30]);
      pool.batches[1].succeed();
      await flush();
      pool.batches[2].succeed();
      expect(await Promise.all(outs)).toEqual([range(0, 30), range(30, 30), range(60, 30)]);
      expect(sizes()).toEqual([30, 30, 30]);
    });

    it('still splits a request larger than maxBatchRows over idle instances', async () => {
      const { pool, submit, sizes } = setUp(3, { enabled: false });
      const out = submit(250);
      expect(sizes()).toEqual([84, 83, 83]);
      for (const batch of pool.batches) batch.succeed();
      expect(await out).toEqual(range(0, 250));
    });
  });
});
