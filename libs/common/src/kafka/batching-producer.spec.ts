import type { TopicMessages } from 'kafkajs';
import { BatchingProducer, OutgoingRecord, ProducerClosedError } from './batching-producer';

/** A broker stand-in: each send waits until the spec answers it. */
function fakeBroker() {
  const sends: { topics: TopicMessages[]; ok: () => void; fail: (error: Error) => void }[] = [];
  const send = (topics: TopicMessages[]) =>
    new Promise<void>((ok, fail) => sends.push({ topics, ok, fail }));
  const values = (i: number) =>
    sends[i].topics.flatMap((t) => t.messages.map((m) => `${t.topic}:${String(m.value)}`));
  return { sends, send, values };
}

const record = (topic: string, value: string): OutgoingRecord => ({
  topic,
  message: { key: value, value },
});

const flush = () => new Promise((resolve) => setImmediate(resolve));

function tracked(promise: Promise<void>) {
  const state = { done: false, error: undefined as Error | undefined };
  promise.then(
    () => (state.done = true),
    (error: Error) => (state.error = error),
  );
  return state;
}

const tooLarge = () => Object.assign(new Error('too large'), { type: 'MESSAGE_TOO_LARGE' });

describe('BatchingProducer', () => {
  it('sends at once when idle, merges what arrives meanwhile into the next request', async () => {
    const broker = fakeBroker();
    const producer = new BatchingProducer({
      send: broker.send,
      maxBatchBytes: 1 << 20,
      refused: () => undefined,
    });
    const a = tracked(producer.send([record('out', 'a')]));
    const b = tracked(producer.send([record('out', 'b'), record('dlq', 'b!')]));
    const c = tracked(producer.send([record('out', 'c')]));
    await flush();
    expect(broker.sends).toHaveLength(1);
    expect(broker.values(0)).toEqual(['out:a']);
    broker.sends[0].ok();
    await flush();
    expect(a.done).toBe(true);
    expect(b.done).toBe(false);
    expect(broker.values(1)).toEqual(['out:b', 'out:c', 'dlq:b!']);
    broker.sends[1].ok();
    await flush();
    expect([b.done, c.done]).toEqual([true, true]);
  });

  it('lets records linger for lingerMs to share a request, unless maxBatchBytes are waiting', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate'] });
    try {
      const broker = fakeBroker();
      const producer = new BatchingProducer({
        send: broker.send,
        maxBatchBytes: 10,
        lingerMs: 5,
        refused: () => undefined,
      });
      void producer.send([record('t', 'a')]);
      void producer.send([record('t', 'b')]);
      await flush();
      expect(broker.sends).toHaveLength(0);
      jest.advanceTimersByTime(5);
      await flush();
      expect(broker.values(0)).toEqual(['t:a', 't:b']);
      broker.sends[0].ok();
      await flush();
      void producer.send([record('t', 'cccccc')]); // 12 bytes with its key: over maxBatchBytes
      await flush();
      expect(broker.values(1)).toEqual(['t:cccccc']);
    } finally {
      jest.useRealTimers();
    }
  });

  it('keeps a request under maxBatchBytes, never splitting one caller', async () => {
    const broker = fakeBroker();
    const producer = new BatchingProducer({
      send: broker.send,
      maxBatchBytes: 8,
      refused: () => undefined,
    });
    void producer.send([record('t', 'x')]);
    void producer.send([record('t', 'aaa'), record('t', 'bbb')]); // 12 bytes: alone
    void producer.send([record('t', 'cc')]);
    void producer.send([record('t', 'dd')]);
    await flush();
    broker.sends[0].ok();
    await flush();
    expect(broker.values(1)).toEqual(['t:aaa', 't:bbb']);
    broker.sends[1].ok();
    await flush();
    expect(broker.values(2)).toEqual(['t:cc', 't:dd']);
  });

  it('retries a failed request with backoff until it is acknowledged', async () => {
    const broker = fakeBroker();
    const retries: number[] = [];
    const producer = new BatchingProducer({
      send: broker.send,
      maxBatchBytes: 1 << 20,
      refused: () => undefined,
      retrying: (_, attempt) => retries.push(attempt),
      backoffMs: () => 1,
    });
    const sent = tracked(producer.send([record('t', 'a')]));
    await flush();
    broker.sends[0].fail(new Error('broker down'));
    await new Promise((resolve) => setTimeout(resolve, 10));
    broker.sends[1].fail(new Error('broker down'));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(sent.done).toBe(false);
    broker.sends[2].ok();
    await flush();
    expect(sent.done).toBe(true);
    expect(retries).toEqual([1, 2]);
  });

  it('sends records one by one when one is refused for good, sending its replacement instead', async () => {
    const refusedValues: string[] = [];
    const sent: string[][] = [];
    const producer = new BatchingProducer({
      send: async (topics) => {
        const values = topics.flatMap((t) => t.messages.map((m) => String(m.value)));
        if (values.some((v) => v.startsWith('huge'))) throw tooLarge();
        sent.push(values);
      },
      maxBatchBytes: 1 << 20,
      refused: (r, type) => {
        refusedValues.push(`${String(r.message.value)} ${type}`);
        return String(r.message.value) === 'huge-result' ? record('t', 'small error') : undefined;
      },
    });
    await producer.send([record('t', 'a'), record('t', 'huge-result'), record('t', 'huge-dlq')]);
    expect(refusedValues).toEqual(['huge-result MESSAGE_TOO_LARGE', 'huge-dlq MESSAGE_TOO_LARGE']);
    expect(sent).toEqual([['a'], ['small error']]);
  });

  it('rejects what is unsent with ProducerClosedError once closed, and stops retrying', async () => {
    const broker = fakeBroker();
    const producer = new BatchingProducer({
      send: broker.send,
      maxBatchBytes: 1 << 20,
      refused: () => undefined,
      backoffMs: () => 60_000,
    });
    const first = tracked(producer.send([record('t', 'a')]));
    const queued = tracked(producer.send([record('t', 'b')]));
    await flush();
    broker.sends[0].fail(new Error('broker down'));
    await flush();
    producer.close();
    await flush();
    expect(first.error).toBeInstanceOf(ProducerClosedError);
    expect(queued.error).toBeInstanceOf(ProducerClosedError);
    await expect(producer.send([record('t', 'c')])).rejects.toBeInstanceOf(ProducerClosedError);
    expect(broker.sends).toHaveLength(1);
  });
});
