import type { EachBatchPayload, KafkaMessage } from 'kafkajs';
import { AdmissionGate } from './admission-gate';
import { BatchingProducer, OutgoingRecord } from './batching-producer';
import { ConcurrentBatchHandler, MessageJob } from './concurrent-batch-handler';

/** A job per message whose outcome the spec decides: answer(), fail(), or never. */
interface ControlledJob {
  offset: string;
  runs: number;
  answer: () => void;
  fail: (error: Error) => void;
}

function setUp(options: { maxRequests?: number; acked?: () => boolean } = {}) {
  const jobs = new Map<string, ControlledJob>();
  const produced: string[] = [];
  const gate = new AdmissionGate(
    { maxRequests: options.maxRequests ?? 100, maxRows: 1000, pauseAt: 0.9, resumeAt: 0.5 },
    () => ({ queuedRows: 0, maxQueueRows: Infinity }),
    { paused: () => undefined, resumed: () => undefined },
  );
  let running = 0;
  let maxRunning = 0;
  const producer = new BatchingProducer({
    send: async (topics) => {
      if (options.acked && !options.acked()) throw new Error('broker down');
      for (const t of topics) for (const m of t.messages) produced.push(String(m.value));
    },
    maxBatchBytes: 1 << 20,
    refused: () => undefined,
    backoffMs: () => 1,
  });
  const retried: string[] = [];
  const lags: number[] = [];
  const handler = new ConcurrentBatchHandler({
    gate,
    producer,
    events: {
      lag: (_t, _p, lag) => lags.push(lag),
      retried: (e) => retried.push((e as Error).message),
    },
    backoffMs: () => 1,
    handler: (message: KafkaMessage): MessageJob => {
      const offset = message.offset;
      const job: ControlledJob = jobs.get(offset) ?? {
        offset,
        runs: 0,
        answer: () => undefined,
        fail: () => undefined,
      };
      jobs.set(offset, job);
      return {
        rows: 1,
        run: () => {
          job.runs++;
          running++;
          maxRunning = Math.max(maxRunning, running);
          return new Promise<OutgoingRecord[]>((resolve, reject) => {
            job.answer = () => {
              running--;
              resolve([{ topic: 'out', message: { key: offset, value: `result ${offset}` } }]);
            };
            job.fail = (error) => {
              running--;
              reject(error);
            };
          });
        },
      };
    },
  });
  const resolved: string[] = [];
  let isRunning = true;
  const payload = (offsets: string[]) =>
    ({
      batch: {
        topic: 'in',
        partition: 0,
        highWatermark: String(Number(offsets[offsets.length - 1]) + 1),
        messages: offsets.map((offset) => ({ offset, key: null, value: Buffer.from(offset) })),
      },
      resolveOffset: (offset: string) => resolved.push(offset),
      heartbeat: async () => undefined,
      commitOffsetsIfNecessary: async () => undefined,
      isRunning: () => isRunning,
      isStale: () => false,
    }) as unknown as EachBatchPayload;
  return {
    handler,
    producer,
    jobs,
    produced,
    resolved,
    retried,
    lags,
    payload,
    maxRunning: () => maxRunning,
    stopRunning: () => (isRunning = false),
  };
}

const flush = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('ConcurrentBatchHandler', () => {
  it('runs a partition batch concurrently and resolves offsets in order once results are acked', async () => {
    const spec = setUp();
    const done = spec.handler.eachBatch(spec.payload(['0', '1', '2']));
    await flush();
    expect(spec.maxRunning()).toBe(3);
    spec.jobs.get('2')!.answer();
    spec.jobs.get('1')!.answer();
    await flush();
    expect(spec.produced).toEqual(['result 2', 'result 1']);
    expect(spec.resolved).toEqual([]);
    spec.jobs.get('0')!.answer();
    await done;
    expect(spec.resolved).toEqual(['2']);
    expect(spec.lags).toEqual([3, 0]);
  });

  it('starts no more messages than the gate admits', async () => {
    const spec = setUp({ maxRequests: 2 });
    const done = spec.handler.eachBatch(spec.payload(['0', '1', '2', '3']));
    await flush();
    expect([...spec.jobs.keys()]).toEqual(['0', '1', '2']); // the third is parsed, waiting
    expect(spec.jobs.get('2')!.runs).toBe(0);
    spec.jobs.get('0')!.answer();
    await flush();
    expect(spec.jobs.get('2')!.runs).toBe(1);
    for (const offset of ['1', '2']) spec.jobs.get(offset)!.answer();
    await flush();
    spec.jobs.get('3')!.answer();
    await done;
    expect(spec.maxRunning()).toBe(2);
    expect(spec.resolved[spec.resolved.length - 1]).toBe('3');
  });

  it('runs a job that threw again, never skipping it, and holds back the offsets after it', async () => {
    const spec = setUp();
    const done = spec.handler.eachBatch(spec.payload(['0', '1']));
    await flush();
    spec.jobs.get('1')!.answer();
    spec.jobs.get('0')!.fail(new Error('overloaded'));
    // The retry comes after a 1 ms backoff; a loaded machine may take longer to run it.
    for (let waited = 0; spec.jobs.get('0')!.runs < 2 && waited < 5000; waited += 5)
      await new Promise((resolve) => setTimeout(resolve, 5));
    expect(spec.resolved).toEqual([]);
    expect(spec.jobs.get('0')!.runs).toBe(2);
    spec.jobs.get('0')!.answer();
    await done;
    expect(spec.retried).toEqual(['overloaded']);
    expect(spec.resolved).toEqual(['1']);
  });

  it('on stop starts nothing more, lets running jobs finish and resolve, and gives up retries', async () => {
    const spec = setUp({ maxRequests: 2 });
    const done = spec.handler.eachBatch(spec.payload(['0', '1', '2']));
    await flush();
    spec.handler.stop();
    spec.jobs.get('0')!.answer();
    spec.jobs.get('1')!.fail(new Error('worker crashed'));
    await done;
    expect(spec.jobs.get('2')!.runs).toBe(0);
    expect(spec.jobs.get('1')!.runs).toBe(1);
    expect(spec.produced).toEqual(['result 0']);
    expect(spec.resolved).toEqual(['0']);
  });

  it('leaves a message unresolved when its results were never acknowledged', async () => {
    let up = true;
    const spec = setUp({ acked: () => up });
    const done = spec.handler.eachBatch(spec.payload(['0', '1']));
    await flush();
    spec.jobs.get('0')!.answer();
    await flush();
    up = false;
    spec.jobs.get('1')!.answer();
    await flush();
    spec.handler.stop();
    // The producer is still retrying '1'; the batch ends only once it closes (the grace period).
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(spec.resolved).toEqual(['0']);
    spec.producer.close();
    await done;
    expect(spec.resolved).toEqual(['0']);
  });
});
