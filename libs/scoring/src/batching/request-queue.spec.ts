import { PendingRequest } from './pending-request';
import { RequestQueue } from './request-queue';
import { numberedFeeds } from './fake-batch-pool';

/** Requests whose `settled` flag counts its reads: the queue's work, measured without a clock. */
function requests(n: number) {
  const counter = { reads: 0 };
  const list = Array.from({ length: n }, (_, i) => {
    const request = new PendingRequest(
      numberedFeeds(1, i),
      1,
      i,
      Infinity,
      () => undefined,
      () => undefined,
    );
    let settled = false;
    Object.defineProperty(request, 'settled', {
      get: () => (counter.reads++, settled),
      set: (value: boolean) => (settled = value),
    });
    return request;
  });
  return { list, counter };
}

/** Settles a queued request the way the batcher does: reject, then tell the queue. */
function settle(queue: RequestQueue, request: PendingRequest): void {
  request.reject(new Error('gone'));
  queue.settledInPlace();
}

describe('RequestQueue', () => {
  it('hands out requests oldest first and skips those settled while queued', () => {
    const queue = new RequestQueue();
    const { list } = requests(5);
    for (const request of list) queue.push(request);
    settle(queue, list[0]);
    settle(queue, list[2]);
    expect(queue.length).toBe(3);
    expect(queue.first()).toBe(list[1]);
    queue.shift();
    expect(queue.first()).toBe(list[3]);
    expect(queue.drain()).toEqual([list[3], list[4]]);
    expect(queue.length).toBe(0);
    expect(queue.first()).toBeUndefined();
  });

  it('drops 20,000 requests settled in any order in linear work, then keeps its order', () => {
    const n = 20_000;
    const queue = new RequestQueue();
    const { list, counter } = requests(n + 3);
    for (const request of list) queue.push(request);
    // Newest first: the worst order for a queue that searches from its head.
    for (let i = n + 2; i >= 3; i--) settle(queue, list[i]);
    settle(queue, list[1]);
    expect(queue.length).toBe(2);
    expect(queue.first()).toBe(list[0]);
    queue.shift();
    expect(queue.first()).toBe(list[2]);
    queue.shift();
    expect(queue.first()).toBeUndefined();
    // Each request's flag is read a small constant number of times, not once per other request.
    expect(counter.reads).toBeLessThanOrEqual(4 * n);
  });

  it('stays linear when requests are settled while the head moves', () => {
    const n = 20_000;
    const queue = new RequestQueue();
    const { list, counter } = requests(n);
    for (const request of list) queue.push(request);
    const taken: PendingRequest[] = [];
    for (let i = 0; i < n / 2; i++) {
      settle(queue, list[n - 1 - i]);
      const head = queue.first();
      if (head) {
        taken.push(head);
        queue.shift();
      }
    }
    expect(taken).toEqual(list.slice(0, n / 2));
    expect(queue.first()).toBeUndefined();
    expect(counter.reads).toBeLessThanOrEqual(4 * n);
  });
});
