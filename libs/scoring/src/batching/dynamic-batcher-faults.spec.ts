/**
 * The batcher under faults against a fake pool (no workers, fake clock): overload, deadlines
 * of queued and running rows, mass expiry, failed and crashed batches, lost capacity, close().
 */
import {
  DeadlineExceededError,
  OverloadedError,
  RankerError,
  RequestTooLargeError,
  WorkerCrashedError,
} from '@app/common';
import { BatchingOptions } from '../model-options';
import { OutputTensors } from '../tensor-types';
import { BEHIND_SHARE } from './batch-size';
import { DynamicBatcher } from './dynamic-batcher';
import { BatcherEvents } from './queue-admission';
import { FakeBatchPool, flush, numberedFeeds, specBatching } from './fake-batch-pool';

function setUp(instances: number, options: Partial<BatchingOptions> = {}) {
  const pool = new FakeBatchPool(instances);
  const rejected: Record<string, number> = {};
  const events: BatcherEvents = {
    dispatched: () => undefined,
    completed: () => undefined,
    rejected: (reason, requests) => (rejected[reason] = (rejected[reason] ?? 0) + requests),
  };
  const batcher = new DynamicBatcher(
    'm',
    specBatching({ maxQueueRows: 1_000, ...options }),
    pool,
    events,
  );
  let next = 0;
  /** Submits `rows` numbered rows; the outcome is kept so a rejection is never unhandled. */
  const submit = (rows: number, deadline?: number) => {
    const from = next;
    next += rows;
    return outcome(batcher.submit(numberedFeeds(rows, from), rows, deadline));
  };
  return { pool, batcher, submit, rejected, sizes: () => pool.batches.map((b) => b.rows) };
}

type Outcome = { rows: number[] } | { error: Error } | 'pending';

/** Reads a promise's state without awaiting it: 'pending' until it settles. */
function outcome(promise: Promise<OutputTensors>): { get: () => Outcome } {
  let state: Outcome = 'pending';
  promise.then(
    (out) => (state = { rows: Array.from(out.x.data) }),
    (error: Error) => (state = { error }),
  );
  return { get: () => state };
}

function errorOf(o: { get: () => Outcome }): Error {
  const state = o.get();
  if (state === 'pending' || !('error' in state)) throw new Error(`expected a rejection`);
  return state.error;
}

function range(from: number, rows: number): number[] {
  return Array.from({ length: rows }, (_, i) => from + i);
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

describe('DynamicBatcher under faults (fake pool)', () => {
  it('refuses a request past maxQueueRows at once with OverloadedError (503) and keeps the rest', async () => {
    const { pool, submit, rejected } = setUp(1);
    const queued = submit(60);
    const refused = submit(950);
    await flush();
    const error = errorOf(refused);
    expect(error).toBeInstanceOf(OverloadedError);
    expect((error as RankerError).status).toBe(503);
    expect(rejected).toEqual({ overloaded: 1 });
    const fits = submit(40);
    await flush();
    expect(fits.get()).toBe('pending');
    expect(pool.batches.map((b) => b.rows)).toEqual([100]);
    pool.batches[0].succeed();
    await flush();
    expect(queued.get()).toEqual({ rows: range(0, 60) });
    expect(fits.get()).toEqual({ rows: range(1010, 40) });
  });

  it('refuses a request larger than maxQueueRows with RequestTooLargeError (413), not OverloadedError, even into an empty queue', async () => {
    const { pool, batcher, submit, rejected } = setUp(1);
    const refused = submit(1_001);
    await flush();
    const error = errorOf(refused);
    expect(error).toBeInstanceOf(RequestTooLargeError);
    expect(error).not.toBeInstanceOf(OverloadedError);
    expect(error).toMatchObject({
      code: 'REQUEST_TOO_LARGE',
      status: 413,
      modelId: 'm',
      rows: 1_001,
      maxRows: 1_000,
    });
    expect(error.message).toBe(
      'model m: a request of 1001 rows can never be queued: maxQueueRows is 1000',
    );
    expect(rejected).toEqual({ too_large: 1 });
    expect(batcher.queueDepth.queuedRows).toBe(0);
    // Exactly maxQueueRows fits an empty queue; behind queued rows the same size is overload.
    const full = submit(1_000);
    const behind = submit(1_000);
    await flush();
    expect(errorOf(behind)).toBeInstanceOf(OverloadedError);
    expect(rejected).toEqual({ too_large: 1, overloaded: 1 });
    for (let batch = pool.running[0]; batch; batch = pool.running[0]) {
      batch.succeed();
      await flush();
    }
    expect(full.get()).toEqual({ rows: range(1_001, 1_000) });
  });

  it('admit() refuses as submit() would, counts the refusal, and queues nothing either way', async () => {
    const { pool, batcher, submit, rejected } = setUp(1);
    const queued = submit(60);
    expect(() => batcher.admit(940)).not.toThrow();
    expect(batcher.queueDepth.queuedRows).toBe(60);
    expect(() => batcher.admit(941)).toThrow(OverloadedError);
    expect(() => batcher.admit(941)).toThrow('model m: 60 rows queued, 941 more would pass 1000');
    expect(() => batcher.admit(1_001)).toThrow(RequestTooLargeError);
    expect(rejected).toEqual({ overloaded: 2, too_large: 1 });
    expect(batcher.queueDepth.queuedRows).toBe(60);
    // What admit() lets in, submit() takes, in the same turn.
    const fits = submit(940);
    await flush();
    expect(fits.get()).toBe('pending');
    expect(rejected).toEqual({ overloaded: 2, too_large: 1 });
    for (let batch = pool.running[0]; batch; batch = pool.running[0]) {
      batch.succeed();
      await flush();
    }
    expect(queued.get()).toEqual({ rows: range(0, 60) });
    expect(fits.get()).toEqual({ rows: range(60, 940) });
    await batcher.close();
    expect(() => batcher.admit(1)).toThrow(WorkerCrashedError);
  });

  describe('maxQueueWaitMs', () => {
    it('refuses new requests while the oldest queued rows have waited longer, and serves what it queued', async () => {
      const { pool, batcher, submit, rejected } = setUp(1, {
        maxQueueDelayMicros: 0,
        maxQueueWaitMs: 50,
      });
      const running = submit(100);
      const queued = submit(10);
      expect(pool.batches.map((b) => b.rows)).toEqual([100]);
      jest.advanceTimersByTime(50);
      expect(() => batcher.admit(1)).not.toThrow();
      jest.advanceTimersByTime(1);
      expect(() => batcher.admit(1)).toThrow(OverloadedError);
      expect(() => batcher.admit(1)).toThrow(
        'model m: the oldest queued rows have waited 51 ms, past maxQueueWaitMs 50',
      );
      const refused = submit(5);
      await flush();
      const error = errorOf(refused);
      expect(error).toBeInstanceOf(OverloadedError);
      expect((error as RankerError).status).toBe(503);
      expect(rejected).toEqual({ queue_wait: 3 });
      // The rows let in before are neither failed nor dropped: they wait their turn.
      expect(queued.get()).toBe('pending');
      expect(batcher.queueDepth.queuedRows).toBe(10);
      pool.batches[0].succeed();
      await flush();
      expect(running.get()).toEqual({ rows: range(0, 100) });
      // Their batch is running: nothing waits, so new requests are taken again.
      expect(batcher.queueDepth.queuedRows).toBe(0);
      expect(() => batcher.admit(1)).not.toThrow();
      pool.batches[1].succeed();
      await flush();
      expect(queued.get()).toEqual({ rows: range(100, 10) });
      expect(rejected).toEqual({ queue_wait: 3 });
    });

    it('checks the rows bound first, and takes any request into an empty queue', async () => {
      const { batcher, submit, rejected } = setUp(1, {
        maxQueueDelayMicros: 0,
        maxQueueWaitMs: 10,
      });
      submit(100);
      submit(10);
      jest.advanceTimersByTime(1_000);
      expect(() => batcher.admit(1_001)).toThrow(RequestTooLargeError);
      expect(() => batcher.admit(991)).toThrow('10 rows queued, 991 more would pass 1000');
      expect(() => batcher.admit(1)).toThrow(/waited 1000 ms/);
      expect(rejected).toEqual({ too_large: 1, overloaded: 1, queue_wait: 1 });
      const idle = setUp(1, { maxQueueDelayMicros: 0, maxQueueWaitMs: 10 });
      jest.advanceTimersByTime(1_000);
      expect(() => idle.batcher.admit(1_000)).not.toThrow();
    });

    it('does not count the batch delay rows are held for by design', async () => {
      const { pool, batcher, submit, rejected } = setUp(1, {
        maxQueueDelayMicros: 20_000,
        maxQueueWaitMs: 5,
      });
      const held = submit(10);
      jest.advanceTimersByTime(19);
      expect(pool.batches).toHaveLength(0);
      expect(() => batcher.admit(1)).not.toThrow();
      jest.advanceTimersByTime(1);
      expect(pool.batches.map((b) => b.rows)).toEqual([10]);
      pool.batches[0].succeed();
      await flush();
      expect(held.get()).toEqual({ rows: range(0, 10) });
      expect(rejected).toEqual({});
    });

    it('counts the whole wait with batching off, where no batch is held for more rows', async () => {
      const { batcher, submit } = setUp(1, {
        enabled: false,
        maxQueueDelayMicros: 20_000,
        maxQueueWaitMs: 5,
      });
      submit(100);
      submit(10);
      jest.advanceTimersByTime(6);
      expect(() => batcher.admit(1)).toThrow(/waited 6 ms, past maxQueueWaitMs 5/);
    });

    it('refuses nothing by wait with maxQueueWaitMs 0 (the default)', async () => {
      const { batcher, submit, rejected } = setUp(1, { maxQueueDelayMicros: 0 });
      submit(100);
      submit(10);
      jest.advanceTimersByTime(600_000);
      expect(() => batcher.admit(1)).not.toThrow();
      expect(rejected).toEqual({});
    });
  });

  it('tells its queue depth: rows waiting (dispatched ones not counted) and maxQueueRows', async () => {
    const { pool, batcher, submit } = setUp(1);
    expect(batcher.queueDepth).toEqual({ queuedRows: 0, maxQueueRows: 1000 });
    submit(60);
    expect(batcher.queueDepth.queuedRows).toBe(60);
    // 210 rows: one balanced batch of 70 runs, one of 70 queues behind it, 70 wait.
    submit(150);
    expect(pool.batches.map((b) => b.rows)).toEqual([70, 70]);
    expect(batcher.queueDepth.queuedRows).toBe(70);
    pool.batches[0].succeed();
    await flush();
    expect(pool.batches.map((b) => b.rows)).toEqual([70, 70, 70]);
    expect(batcher.queueDepth.queuedRows).toBe(0);
  });

  describe('deadlines', () => {
    it('rejects a request whose deadline has already passed without queueing it', async () => {
      const { pool, submit, rejected } = setUp(1, { maxQueueDelayMicros: 0 });
      const late = submit(10, performance.now() - 1);
      await flush();
      expect(errorOf(late)).toBeInstanceOf(DeadlineExceededError);
      expect(pool.batches).toHaveLength(0);
      expect(rejected).toEqual({ deadline: 1 });
    });

    it('drops queued rows at their deadline; they are never dispatched', async () => {
      const { pool, submit, sizes } = setUp(1, { maxQueueDelayMicros: 0 });
      const running = submit(100);
      const queued = submit(10, performance.now() + 30);
      jest.advanceTimersByTime(29);
      await flush();
      expect(queued.get()).toBe('pending');
      jest.advanceTimersByTime(1);
      await flush();
      const error = errorOf(queued);
      expect(error).toBeInstanceOf(DeadlineExceededError);
      expect((error as RankerError).status).toBe(504);
      expect(error.message).toMatch(/10 of 10 rows unscored/);
      pool.batches[0].succeed();
      await flush();
      expect(running.get()).toEqual({ rows: range(0, 100) });
      expect(sizes()).toEqual([100]);
    });

    it('answers a running request at its deadline and drops only its share of the late batch', async () => {
      const { pool, submit, rejected } = setUp(1, { preferredBatchRows: [50] });
      const late = submit(30, performance.now() + 30);
      const neighbour = submit(20);
      expect(pool.batches.map((b) => b.rows)).toEqual([50]);
      jest.advanceTimersByTime(30);
      await flush();
      expect(errorOf(late)).toBeInstanceOf(DeadlineExceededError);
      expect(errorOf(late).message).toMatch(/30 of 30 rows unscored/);
      expect(neighbour.get()).toBe('pending');
      pool.batches[0].succeed();
      await flush();
      expect(neighbour.get()).toEqual({ rows: range(30, 20) });
      expect(errorOf(late)).toBeInstanceOf(DeadlineExceededError);
      expect(rejected).toEqual({ deadline: 1 });
      expect(pool.inUse).toBe(0);
    });

    it('fails a split request at its deadline, frees its queued rows and never dispatches them', async () => {
      const { pool, submit, sizes } = setUp(1, { maxQueueDelayMicros: 0, maxQueueRows: 300 });
      const split = submit(250, performance.now() + 30);
      // One balanced third runs, one queues behind it; 83 rows wait for the instance.
      expect(pool.batches.map((b) => [b.rows, b.behind])).toEqual([
        [84, false],
        [83, true],
      ]);
      jest.advanceTimersByTime(30);
      await flush();
      expect(errorOf(split).message).toMatch(/250 of 250 rows unscored/);
      // Its 83 queued rows no longer count against maxQueueRows.
      const next = submit(300);
      await flush();
      expect(next.get()).toBe('pending');
      // The instance holds a batch and one behind it: the new request's rows wait.
      expect(sizes()).toEqual([84, 83]);
      while (pool.running.length > 0) {
        for (const batch of pool.running) batch.succeed();
        await flush();
      }
      expect(next.get()).toEqual({ rows: range(250, 300) });
      // Only the rows running or queued behind when the deadline passed were ever dispatched.
      expect(sizes().reduce((a, b) => a + b)).toBe(84 + 83 + 300);
    });

    it('expires 16,000 queued requests at once in linear work, and keeps serving', async () => {
      // Real timers: the fake clock scans every timer each time one fires, which is quadratic
      // in itself. Node's timers of one duration share a list and fire in order.
      jest.useRealTimers();
      // Fewer than a quarter of maxBatchRows (BEHIND_SHARE): however fast they are submitted, no
      // batch is cut behind the running one, and all of them expire from the queue. With 20,000
      // (until 2026-12-07), a run that queued 16,384 of them inside their 50 ms cut one.
      const n = 16_000;
      const maxBatchRows = 65_536;
      expect(n).toBeLessThan(maxBatchRows * BEHIND_SHARE);
      const { pool, submit, rejected } = setUp(1, {
        maxBatchRows,
        maxQueueRows: 1_000_000,
        maxQueueDelayMicros: 0,
      });
      const running = submit(10);
      const deadline = performance.now() + 50;
      const queued = Array.from({ length: n }, () => submit(1, deadline));
      // Each submit asks the pool a bounded number of questions, however long the queue.
      expect(pool.polls).toBeLessThanOrEqual(4 * (n + 1));
      const pollsBefore = pool.polls;
      await new Promise((resolve) => setTimeout(resolve, 100));
      await flush();
      const expired = queued.filter((request) => errorOf(request) instanceof DeadlineExceededError);
      expect(expired).toHaveLength(n);
      expect(rejected).toEqual({ deadline: n });
      // Expiry asks the pool nothing: each request leaves the queue on its own (RequestQueue).
      expect(pool.polls).toBe(pollsBefore);
      pool.batches[0].succeed();
      await flush();
      const after = submit(5);
      pool.batches[1].succeed();
      await flush();
      expect(running.get()).toEqual({ rows: range(0, 10) });
      expect(after.get()).toEqual({ rows: range(10 + n, 5) });
      expect(pool.batches.map((b) => b.rows)).toEqual([10, 5]);
    });
  });

  describe('failed batches', () => {
    it('fails only the requests of a failed batch; the others get their rows', async () => {
      const { pool, submit, rejected } = setUp(2, { maxQueueDelayMicros: 0 });
      const a = submit(50);
      const b = submit(50);
      pool.batches[0].fail(new Error('model said no'));
      pool.batches[1].succeed();
      await flush();
      expect(errorOf(a).message).toBe('model said no');
      expect(b.get()).toEqual({ rows: range(50, 50) });
      expect(rejected).toEqual({ run_failed: 1 });
    });

    it('fails a request split over batches once when one crashes, with WorkerCrashedError', async () => {
      const { pool, submit, rejected } = setUp(2, { maxQueueDelayMicros: 0 });
      const split = submit(200);
      expect(pool.batches.map((b) => b.rows)).toEqual([100, 100]);
      pool.batches[1].fail(new WorkerCrashedError('worker died with a batch in flight'));
      await flush();
      const error = errorOf(split);
      expect(error).toBeInstanceOf(WorkerCrashedError);
      expect((error as RankerError).code).toBe('WORKER_CRASHED');
      pool.batches[0].succeed();
      await flush();
      expect(errorOf(split)).toBe(error);
      expect(rejected).toEqual({ worker_crashed: 1 });
      const next = submit(10);
      pool.batches[2].succeed();
      await flush();
      expect(next.get()).toEqual({ rows: range(200, 10) });
    });

    it('fails queued work with WorkerCrashedError once the pool has no capacity left', async () => {
      const { pool, submit } = setUp(1, { maxQueueDelayMicros: 0 });
      const running = submit(100);
      const queued = submit(10);
      pool.hasCapacity = false;
      pool.batches[0].fail(new WorkerCrashedError('worker died'));
      await flush();
      expect(errorOf(running)).toBeInstanceOf(WorkerCrashedError);
      expect(errorOf(queued).message).toMatch(/no worker could be started/);
    });
  });

  it('close() fails queued work, waits for batches in flight and refuses new work', async () => {
    const { pool, batcher, submit, rejected } = setUp(1, { maxQueueDelayMicros: 0 });
    const running = submit(100);
    const queued = submit(10);
    let closed = false;
    const closing = batcher.close().then(() => (closed = true));
    await flush();
    expect(errorOf(queued).message).toMatch(/unloaded/);
    expect(closed).toBe(false);
    pool.batches[0].succeed();
    await closing;
    expect(running.get()).toEqual({ rows: range(0, 100) });
    const after = submit(1);
    await flush();
    expect(errorOf(after)).toBeInstanceOf(WorkerCrashedError);
    expect(rejected).toEqual({ worker_crashed: 1 });
    expect(pool.batches).toHaveLength(1);
  });
});
