/** The queue's admission rules alone: rows, the queue's bound, its wait, and what each counts. */
import { OverloadedError, RequestTooLargeError } from '@app/common';
import { BatchingOptions } from '../model-options';
import { specBatching } from './fake-batch-pool';
import { BatcherEvents, queueRefusal, RejectReason } from './queue-admission';

function setUp(queuedRows: number, waitedMs: number, options: Partial<BatchingOptions> = {}) {
  const counted: RejectReason[] = [];
  const events: BatcherEvents = {
    dispatched: () => undefined,
    completed: () => undefined,
    rejected: (reason) => void counted.push(reason),
  };
  let asked = 0;
  const queue = {
    modelId: 'm',
    options: specBatching({ maxQueueRows: 1000, ...options }),
    queuedRows,
    oldestWaitMs: () => (asked++, waitedMs),
  };
  return {
    refuse: (rows: number) => queueRefusal(queue, rows, events),
    counted,
    asked: () => asked,
  };
}

describe('queueRefusal', () => {
  it('takes rows up to the bound, counting nothing', () => {
    const { refuse, counted } = setUp(400, 0);
    expect(refuse(600)).toBeUndefined();
    expect(counted).toEqual([]);
  });

  it('refuses more rows than the queue ever holds as too large, whatever it holds now', () => {
    const { refuse, counted } = setUp(0, 0);
    const error = refuse(1001);
    expect(error).toBeInstanceOf(RequestTooLargeError);
    expect(error?.message).toContain('maxQueueRows is 1000');
    expect(counted).toEqual(['too_large']);
  });

  it('refuses rows past what is left of the bound as overloaded', () => {
    const { refuse, counted } = setUp(400, 0);
    const error = refuse(601);
    expect(error).toBeInstanceOf(OverloadedError);
    expect(error?.message).toContain('400 rows queued, 601 more would pass 1000');
    expect(counted).toEqual(['overloaded']);
  });

  it('reads the wait only with maxQueueWaitMs set, and refuses past it', () => {
    const off = setUp(10, 5_000);
    expect(off.refuse(1)).toBeUndefined();
    expect(off.asked()).toBe(0);

    const within = setUp(10, 100, { maxQueueWaitMs: 100 });
    expect(within.refuse(1)).toBeUndefined();

    const late = setUp(10, 100.4, { maxQueueWaitMs: 100 });
    const error = late.refuse(1);
    expect(error).toBeInstanceOf(OverloadedError);
    expect(error?.message).toContain('waited 100 ms, past maxQueueWaitMs 100');
    expect(late.counted).toEqual(['queue_wait']);
  });
});
