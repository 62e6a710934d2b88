/**
 * The engine with real worker threads and real onnxruntime-node sessions on the example CTR
 * model: results against a main-thread session, batching, back-pressure, deadlines, input
 * checks, load failures, execution providers, worker crashes and model replacement.
 */
import 'reflect-metadata';
import {
  DeadlineExceededError,
  ExecutionProviderUnavailableError,
  ModelInputError,
  ModelLoadError,
  OverloadedError,
  RankerError,
  RequestTooLargeError,
  WorkerCrashedError,
} from '@app/common';
import { Logger } from '@nestjs/common';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { Registry } from 'prom-client';
import { DEFAULT_BATCHING, ModelLoadOptions, resolveModelOptions } from './model-options';
import { procStatFields } from '../../../test/support/proc-stat';
import { ScoringConfig } from './scoring.config';
import { ScoringMetrics } from './scoring.metrics';
import { InputFeeds, OutputTensors } from './tensor-types';
import { helperNice, WorkerScoringEngine } from './worker-scoring-engine';
import { CoreBudget } from './worker/core-budget';
import { InstancePool } from './worker/instance-pool';
import { ThreadReserve } from './worker/thread-reserve';

const MODEL = join(__dirname, '../../../models/feed/v1/ctr.onnx');
/** Two outputs (ctr, cvr) over inputs shaped as MODEL's, with ids below 500. */
const MTL_MODEL = join(__dirname, '../../../models/feed/v1/mtl.onnx');
/** Far longer than any test: a batch that leaves before it did not wait for the delay. */
const FOREVER_MICROS = 600_000_000;
/** Bound on awaits that must not hang (a hang fails the test instead of timing it out). */
const BOUND_MS = 20_000;

/** Nice value of each thread of this process, by thread id (Linux /proc). */
function threadNices(): Map<number, number> {
  const nices = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    nices.set(Number(tid), Number(procStatFields(`/proc/self/task/${tid}/stat`)(19)));
  }
  return nices;
}

/** Random CTR-model feeds (26 ids in [0, ids), 13 floats in [-1, 1)), reproducible by seed. */
function ctrFeeds(rows: number, seed: number, ids = 1000): InputFeeds {
  let s = seed >>> 0;
  const next = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const sparse = new BigInt64Array(rows * 26);
  for (let i = 0; i < sparse.length; i++) sparse[i] = BigInt(Math.floor(next() * ids));
  const dense = new Float32Array(rows * 13);
  for (let i = 0; i < dense.length; i++) dense[i] = next() * 2 - 1;
  return {
    sparse_ids: { dtype: 'int64', data: sparse, dims: [rows, 26] },
    dense: { dtype: 'float32', data: dense, dims: [rows, 13] },
  };
}

/** The engine takes ownership of (transfers) the buffers it is given: hand it copies. */
function copyFeeds(feeds: InputFeeds): InputFeeds {
  const out: InputFeeds = {};
  for (const [name, feed] of Object.entries(feeds))
    out[name] = { ...feed, data: feed.data.slice() };
  return out;
}

/** Settles like `promise`, or rejects after BOUND_MS so a hang fails the test by name. */
async function bounded<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what}: no answer within ${BOUND_MS} ms`)),
      BOUND_MS,
    );
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The error `promise` rejects with; fails the test if it resolves. */
async function rejectionOf(promise: Promise<unknown>, what: string): Promise<Error> {
  try {
    await bounded(promise, what);
  } catch (error) {
    return error as Error;
  }
  throw new Error(`${what}: expected a rejection`);
}

function expectClose(actual: Float32Array, expected: Float32Array): void {
  expect(actual.length).toBe(expected.length);
  let worst = 0;
  for (let i = 0; i < expected.length; i++) {
    expect(Number.isFinite(actual[i])).toBe(true);
    worst = Math.max(worst, Math.abs(actual[i] - expected[i]));
  }
  expect(worst).toBeLessThanOrEqual(1e-5);
}

describe('WorkerScoringEngine (real workers, real onnxruntime)', () => {
  let reference: InferenceSession;
  let registry: Registry;
  let engine: WorkerScoringEngine;

  /** `feeds` as onnxruntime tensors over copies of their data, for a session of our own. */
  function tensorsOf(feeds: InputFeeds): Record<string, Tensor> {
    const tensors: Record<string, Tensor> = {};
    for (const [name, f] of Object.entries(feeds))
      tensors[name] = new Tensor(f.dtype, f.data.slice(), [...f.dims]);
    return tensors;
  }

  /** The CTR scores of `feeds` from a plain session on this thread. */
  async function raw(feeds: InputFeeds): Promise<Float32Array> {
    const out = await reference.run(tensorsOf(feeds));
    return Float32Array.from(out.ctr.data as Float32Array);
  }

  function load(id: string, options: Partial<ModelLoadOptions> = {}) {
    return engine.load({ id, file: MODEL, instances: 1, ...options });
  }

  function score(id: string, feeds: InputFeeds, deadline?: number): Promise<OutputTensors> {
    return engine.score(id, copyFeeds(feeds), deadline === undefined ? {} : { deadline });
  }

  async function values(name: string, model: string) {
    const metric = registry.getSingleMetric(name);
    if (!metric) throw new Error(`no metric ${name}`);
    return (await metric.get()).values.filter((v) => v.labels.model === model);
  }

  async function counter(name: string, model: string, labels: Record<string, string> = {}) {
    const found = (await values(name, model)).filter((v) =>
      Object.entries(labels).every(([k, want]) => v.labels[k] === want),
    );
    return found.reduce((sum, v) => sum + v.value, 0);
  }

  /** Batches sent to the model's instances, their total rows, and how many had <= `le` rows. */
  async function batches(model: string, le = 512) {
    // A histogram's values carry the series name (_bucket, _sum, _count); Metric.get() omits it.
    const all = (await values('ranker_scoring_batch_rows', model)) as {
      metricName?: string;
      labels: Record<string, string | number>;
      value: number;
    }[];
    const pick = (suffix: string, extra?: (v: (typeof all)[number]) => boolean) =>
      all.find((v) => v.metricName?.endsWith(suffix) && (!extra || extra(v)))?.value ?? 0;
    return {
      count: pick('_count'),
      rows: pick('_sum'),
      atMost: pick('_bucket', (v) => v.labels.le === le),
    };
  }

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    reference = await InferenceSession.create(MODEL, { intraOpNumThreads: 1 });
  });

  afterAll(async () => {
    await reference.release();
  });

  /** Sets `engine` (and `registry`, its metrics) to a new engine: the specs' settings, `extra`. */
  function useEngine(extra: Partial<ScoringConfig> = {}): void {
    registry = new Registry();
    engine = new WorkerScoringEngine(
      Object.assign(new ScoringConfig(), {
        SCORING_MAX_CONCURRENT_BATCHES: 2,
        SCORING_DEFAULT_INSTANCES: 1,
        // Spare threads have their own describe below; elsewhere every load starts its own.
        SCORING_SPARE_THREADS: 0,
        ...extra,
      }),
      new ScoringMetrics(registry),
    );
  }

  beforeEach(() => useEngine());

  afterEach(async () => {
    await engine.onApplicationShutdown();
  });

  describe('spare threads', () => {
    let spared: WorkerScoringEngine;
    let sparedRegistry: Registry;

    beforeEach(() => {
      sparedRegistry = new Registry();
      spared = new WorkerScoringEngine(
        Object.assign(new ScoringConfig(), {
          SCORING_MAX_CONCURRENT_BATCHES: 2,
          SCORING_SPARE_THREADS: 2,
        }),
        new ScoringMetrics(sparedRegistry),
      );
    });

    afterEach(async () => {
      await spared.onApplicationShutdown();
    });

    const starts = async (source: string) =>
      (await sparedRegistry.getSingleMetric('ranker_scoring_thread_starts_total')!.get()).values
        .filter((v) => v.labels.source === source)
        .reduce((sum, v) => sum + v.value, 0);
    const threadIds = (id: string) =>
      spared
        .pool(id)!
        .live.map((i) => i.threadId)
        .sort();
    const idleIds = () => spared.spareThreads.idleThreads.map((w) => w.threadId).sort();

    it('starts spares at boot, gives them to a version loaded beside traffic, and takes the released version back', async () => {
      await spared.load({ id: 'v1', file: MODEL, instances: 2 });
      expect(spared.spareThreads.idleCount).toBe(2);
      const spares = idleIds();
      const v1Threads = threadIds('v1');
      expect(await starts('new')).toBe(2);

      // Beside traffic: the new version's instances are the spare threads, nothing is started.
      await spared.load({ id: 'v2', file: MODEL, instances: 2, staggeredStart: true });
      expect(threadIds('v2')).toEqual(spares);
      expect(spared.spareThreads.idleCount).toBe(0);
      expect(await starts('spare')).toBe(2);
      expect(await starts('new')).toBe(2);

      // The released version's threads end their sessions and wait for the next version.
      await spared.unload('v1');
      expect(idleIds()).toEqual(v1Threads);
      expect(
        (await sparedRegistry.getSingleMetric('ranker_scoring_spare_threads')!.get()).values[0]
          .value,
      ).toBe(2);

      // A thread that served one model serves the next one right.
      await spared.load({ id: 'v3', file: MODEL, instances: 2, staggeredStart: true });
      expect(threadIds('v3')).toEqual(v1Threads);
      const feeds = ctrFeeds(300, 21);
      const scored = await bounded(spared.score('v3', copyFeeds(feeds)), 'score on v3');
      expectClose(scored.ctr.data, await raw(feeds));
      expect(await starts('new')).toBe(2);
    });

    it('keeps no more than SCORING_SPARE_THREADS: a thread given back beyond it is stopped', async () => {
      await spared.load({ id: 'v1', file: MODEL, instances: 2 });
      await spared.load({ id: 'v2', file: MODEL, instances: 3, staggeredStart: true });
      // Two spares and one new thread serve v2; releasing it brings back only two.
      expect(await starts('new')).toBe(3);
      const v2Threads = threadIds('v2');
      await spared.unload('v2');
      expect(spared.spareThreads.idleCount).toBe(2);
      const stopped = v2Threads.filter((id) => !idleIds().includes(id));
      expect(stopped).toHaveLength(1);
    });

    it('drops a spare that dies while idle and starts a thread instead of handing it out', async () => {
      await spared.load({ id: 'v1', file: MODEL, instances: 1 });
      expect(spared.spareThreads.idleCount).toBe(2);
      const [doomed] = spared.spareThreads.idleThreads;
      const exited = new Promise((done) => doomed.once('exit', done));
      await doomed.terminate();
      await exited;
      expect(spared.spareThreads.idleCount).toBe(1);
      expect(idleIds()).not.toContain(doomed.threadId);
      await spared.load({ id: 'v2', file: MODEL, instances: 2, staggeredStart: true });
      expect(await starts('spare')).toBe(1);
      const feeds = ctrFeeds(40, 22);
      expectClose(
        (await bounded(spared.score('v2', copyFeeds(feeds)), 'score on v2')).ctr.data,
        await raw(feeds),
      );
    });

    it('stops a spare whose model fails to load; the version is refused with its reason', async () => {
      const broken = join(tmpdir(), `ranker-not-a-model-${process.pid}.onnx`);
      writeFileSync(broken, 'not an onnx file');
      try {
        await spared.load({ id: 'v1', file: MODEL, instances: 1 });
        const spares = idleIds();
        const error = await rejectionOf(
          spared.load({ id: 'bad', file: broken, instances: 1, staggeredStart: true }),
          'broken load',
        );
        expect(error).toBeInstanceOf(ModelLoadError);
        // The spare it took is gone, not back in the reserve with a half-made session.
        expect(spares.filter((id) => idleIds().includes(id))).toHaveLength(1);
        const feeds = ctrFeeds(8, 23);
        expectClose(
          (await bounded(spared.score('v1', copyFeeds(feeds)), 'score on v1')).ctr.data,
          await raw(feeds),
        );
      } finally {
        rmSync(broken, { force: true });
      }
    });
  });

  describe('thread priority', () => {
    it('runs each worker thread at SCORING_WORKER_NICE, every other helper below it, and leaves the event-loop thread as it was', async () => {
      const before = threadNices().get(process.pid);
      const niced = new WorkerScoringEngine(
        Object.assign(new ScoringConfig(), { SCORING_WORKER_NICE: 7 }),
      );
      try {
        await niced.load({ id: 'niced', file: MODEL, instances: 2 });
        const nices = threadNices();
        expect(nices.get(process.pid)).toBe(before);
        // Each worker, and any thread onnxruntime started for its session, is at 7; the process's
        // helper threads (V8's platform threads, libuv's pool) below them (at 8, or where an
        // earlier engine of this process put them), none above.
        expect([...nices.values()].filter((n) => n === 7).length).toBeGreaterThanOrEqual(2);
        expect([...nices.values()].filter((n) => n > 7).length).toBeGreaterThanOrEqual(1);
        expect([...nices.entries()].filter(([tid, n]) => tid !== process.pid && n < 7)).toEqual([]);
        expect(await bounded(niced.score('niced', ctrFeeds(5, 3)), 'score')).toBeDefined();
      } finally {
        await niced.onApplicationShutdown();
      }
    });
  });

  describe('results', () => {
    it('equal a main-thread onnxruntime session for a small request', async () => {
      const info = await load('small');
      expect(info.provider).toBe('cpu');
      expect(info.metadata.inputs.map((i) => i.name).sort()).toEqual(['dense', 'sparse_ids']);
      const feeds = ctrFeeds(3, 7);
      const out = await bounded(score('small', feeds), 'score');
      expect(out.ctr.dims).toEqual([3, 1]);
      expectClose(out.ctr.data, await raw(feeds));
      expect(await counter('ranker_scoring_rows_total', 'small')).toBe(3);
    });

    it('split a large request into sub-batches of at most maxBatchRows and reassemble them in order', async () => {
      await load('large', { instances: 2, batching: { maxBatchRows: 512 } });
      const feeds = ctrFeeds(3000, 11);
      const out = await bounded(score('large', feeds), 'score');
      expect(out.ctr.dims).toEqual([3000, 1]);
      expectClose(out.ctr.data, await raw(feeds));
      const b = await batches('large', 512);
      expect(b.count).toBeGreaterThan(1);
      expect(b.atMost).toBe(b.count);
      expect(b.rows).toBe(3000);
      expect(await counter('ranker_scoring_rows_total', 'large')).toBe(3000);
    });
  });

  describe('batch buffers', () => {
    /** `feeds` built in the engine's own buffers (longer than the tensors), as the pipeline does. */
    function inEngineBuffers(feeds: InputFeeds): InputFeeds {
      const out: InputFeeds = {};
      for (const [name, { dtype, data, dims }] of Object.entries(feeds)) {
        const buffer = engine.tensorBuffer(data.byteLength);
        const view =
          dtype === 'int64'
            ? new BigInt64Array(buffer, 0, data.length)
            : new Float32Array(buffer, 0, data.length);
        view.set(data as never);
        out[name] = { dtype, data: view, dims };
      }
      return out;
    }

    it('uses the buffers workers hand back for later batches, and every request keeps its own rows', async () => {
      await load('reuse', { instances: 2, batching: { maxBatchRows: 500 } });
      for (let round = 0; round < 3; round++) {
        const requests = Array.from({ length: 6 }, (_, i) =>
          ctrFeeds(900 + 50 * i, 40 + round * 10 + i),
        );
        const built = requests.map(inEngineBuffers);
        const outs = await bounded(
          Promise.all(built.map((feeds) => engine.score('reuse', feeds))),
          'scores',
        );
        for (const feeds of built) engine.recycle(feeds);
        for (let i = 0; i < requests.length; i++)
          expectClose(outs[i].ctr.data, await raw(requests[i]));
      }
      const reg = registry.getSingleMetric('ranker_scoring_batch_buffers_total')!;
      const byResult = Object.fromEntries(
        (await reg.get()).values.map((v) => [v.labels.result, v.value]),
      );
      // Later rounds find their buffers in the pool: most takes are reuses.
      expect(byResult.reused).toBeGreaterThan(byResult.allocated);
    });

    it('hands a request that is a whole batch over in its own buffer, longer than its tensor', async () => {
      await load('whole', { batching: { maxBatchRows: 1024, maxQueueDelayMicros: 0 } });
      const feeds = ctrFeeds(700, 33);
      const built = inEngineBuffers(feeds);
      expect(built.dense.data.byteLength).toBeLessThan(built.dense.data.buffer.byteLength);
      const out = await bounded(engine.score('whole', built), 'score');
      expectClose(out.ctr.data, await raw(feeds));
      // Sent without a copy: the request's own arrays went to the worker (detached here).
      for (const feed of Object.values(built)) expect(feed.data.byteLength).toBe(0);
      engine.recycle(built);
    });

    it('allocates every batch afresh with SCORING_BUFFER_POOL_MB 0, with the same results', async () => {
      const own = new Registry();
      const unpooled = new WorkerScoringEngine(
        Object.assign(new ScoringConfig(), {
          SCORING_BUFFER_POOL_MB: 0,
          SCORING_DEFAULT_INSTANCES: 1,
        }),
        new ScoringMetrics(own),
      );
      try {
        await unpooled.load({ id: 'fresh', file: MODEL, batching: { maxBatchRows: 300 } });
        for (let round = 0; round < 2; round++) {
          const feeds = ctrFeeds(1000, 70 + round);
          const out = await bounded(unpooled.score('fresh', copyFeeds(feeds)), 'score');
          expectClose(out.ctr.data, await raw(feeds));
        }
        const takes = (await own.getSingleMetric('ranker_scoring_batch_buffers_total')!.get())
          .values;
        expect(takes.find((v) => v.labels.result === 'reused')?.value ?? 0).toBe(0);
        expect(takes.find((v) => v.labels.result === 'allocated')?.value).toBeGreaterThan(0);
      } finally {
        await unpooled.onApplicationShutdown();
      }
    });

    it('runs a batch larger than maxRunRows as parts over views of its buffers: one batch, every row scored as in one run', async () => {
      await load('parts', {
        session: { maxRunRows: 256 },
        batching: { maxBatchRows: 1024, maxQueueDelayMicros: 0 },
      });
      const feeds = ctrFeeds(1000, 81);
      const built = inEngineBuffers(feeds);
      expect(built.dense.data.byteLength).toBeLessThan(built.dense.data.buffer.byteLength);
      const out = await bounded(engine.score('parts', built), 'score');
      expect(out.ctr.dims).toEqual([1000, 1]);
      expectClose(out.ctr.data, await raw(feeds));
      // Parts are not batches: one message each way, one batch in the metrics.
      expect(await batches('parts', 1024)).toMatchObject({ count: 1, rows: 1000 });
      engine.recycle(built);
      // A batch that fits runs whole, and the thread's buffers serve the next request right.
      const small = ctrFeeds(200, 82);
      expectClose((await bounded(score('parts', small), 'small')).ctr.data, await raw(small));
    });

    it('joins every output of a multi-output model from its parts, rows in order', async () => {
      const mtl = await InferenceSession.create(MTL_MODEL, { intraOpNumThreads: 1 });
      try {
        await engine.load({
          id: 'mtl-parts',
          file: MTL_MODEL,
          instances: 1,
          session: { maxRunRows: 300 },
          batching: { maxBatchRows: 2048, maxQueueDelayMicros: 0 },
        });
        const feeds = ctrFeeds(1001, 83, 500);
        const out = await bounded(engine.score('mtl-parts', copyFeeds(feeds)), 'score');
        const expected = await mtl.run(tensorsOf(feeds));
        expect(Object.keys(out).sort()).toEqual(['ctr', 'cvr']);
        for (const name of ['ctr', 'cvr']) {
          expect(out[name].dims).toEqual([1001, 1]);
          expectClose(out[name].data, expected[name].data as Float32Array);
        }
      } finally {
        await mtl.release();
      }
    });
  });

  describe('dynamic batching', () => {
    it('merges many small concurrent requests and gives each exactly its own rows', async () => {
      await load('merge', { batching: { maxQueueDelayMicros: 50_000 } });
      const requests = Array.from({ length: 30 }, (_, i) => ctrFeeds(10, 100 + i));
      const outs = await bounded(
        Promise.all(requests.map((feeds) => score('merge', feeds))),
        'scores',
      );
      for (let i = 0; i < requests.length; i++) {
        expect(outs[i].ctr.dims).toEqual([10, 1]);
        expectClose(outs[i].ctr.data, await raw(requests[i]));
      }
      const b = await batches('merge');
      expect(b.count).toBeLessThan(requests.length);
      expect(b.rows).toBe(300);
    });

    it('sends a batch as soon as a preferred size fills, without waiting for the queue delay', async () => {
      await load('preferred', {
        batching: { maxQueueDelayMicros: FOREVER_MICROS, preferredBatchRows: [40] },
      });
      const requests = Array.from({ length: 4 }, (_, i) => ctrFeeds(10, 200 + i));
      const outs = await bounded(
        Promise.all(requests.map((feeds) => score('preferred', feeds))),
        'scores (the queue delay is 10 minutes: only the preferred size can send them)',
      );
      for (let i = 0; i < requests.length; i++)
        expectClose(outs[i].ctr.data, await raw(requests[i]));
      expect(await batches('preferred', 32)).toEqual({ count: 1, rows: 40, atMost: 0 });
    });

    it('runs one batch per request when batching is disabled', async () => {
      await load('unbatched', {
        batching: { enabled: false, maxQueueDelayMicros: FOREVER_MICROS },
      });
      const requests = Array.from({ length: 6 }, (_, i) => ctrFeeds(10, 300 + i));
      const outs = await bounded(
        Promise.all(requests.map((feeds) => score('unbatched', feeds))),
        'scores',
      );
      for (let i = 0; i < requests.length; i++)
        expectClose(outs[i].ctr.data, await raw(requests[i]));
      const b = await batches('unbatched', 16);
      expect(b).toEqual({ count: 6, rows: 60, atMost: 6 });
    });
  });

  describe('queueing behind a running instance', () => {
    it('queues a full batch behind the running one when a deep backlog waits', async () => {
      await load('deep', { batching: { maxBatchRows: 512, maxQueueDelayMicros: 0 } });
      const instance = engine.pool('deep')!.live[0];
      const feeds = ctrFeeds(3000, 40);
      const out = score('deep', feeds);
      expect(instance.load).toBe(2); // one 512-row batch running, one queued behind it
      expectClose((await bounded(out, 'deep backlog')).ctr.data, await raw(feeds));
    });

    it('keeps a backlog under a quarter of maxBatchRows waiting, then queues it behind', async () => {
      await load('shallow', { batching: { maxBatchRows: 512, maxQueueDelayMicros: 0 } });
      const instance = engine.pool('shallow')!.live[0];
      const first = score('shallow', ctrFeeds(512, 41));
      const second = score('shallow', ctrFeeds(100, 42));
      // 100 rows wait, under a quarter of 512: they stay queued to merge with more.
      expect(instance.load).toBe(1);
      const third = score('shallow', ctrFeeds(60, 43));
      // 160 wait: one batch of both queues behind the running one.
      expect(instance.load).toBe(2);
      await bounded(Promise.all([first, second, third]), 'shallow backlog');
      expect(await batches('shallow', 512)).toMatchObject({ count: 2, rows: 672 });
    });
  });

  describe('back-pressure', () => {
    it('refuses requests past maxQueueRows at once with OverloadedError and scores the rest', async () => {
      await load('bounded', { batching: { maxQueueRows: 100, maxQueueDelayMicros: 50_000 } });
      const settled: ('fulfilled' | 'rejected')[] = [];
      const requests = Array.from({ length: 20 }, (_, i) => ctrFeeds(20, 400 + i));
      const scored = Promise.allSettled(
        requests.map((feeds) =>
          score('bounded', feeds).then(
            (out) => (settled.push('fulfilled'), out),
            (error: unknown) => {
              settled.push('rejected');
              throw error;
            },
          ),
        ),
      );
      // The signal a backlog feeder holds back on: the queue is full while its rows wait.
      expect(engine.queueDepth()).toEqual({ queuedRows: 100, maxQueueRows: 100 });
      const results = await bounded(scored, 'scores');
      expect(engine.queueDepth().queuedRows).toBe(0);
      const refused = results.filter((r) => r.status === 'rejected');
      // 100 queued rows hold five 20-row requests; nothing leaves before the 50 ms delay.
      expect(refused).toHaveLength(15);
      for (const r of refused) {
        const error = r.reason as RankerError;
        expect(error).toBeInstanceOf(OverloadedError);
        expect(error.code).toBe('OVERLOADED');
        expect(error.status).toBe(503);
      }
      // Refusals come back before any accepted request is scored.
      expect(settled.lastIndexOf('rejected')).toBeLessThan(settled.indexOf('fulfilled'));
      for (let i = 0; i < results.length; i++) {
        const r = results[i];
        if (r.status === 'fulfilled') expectClose(r.value.ctr.data, await raw(requests[i]));
      }
      expect(
        await counter('ranker_scoring_rejections_total', 'bounded', { reason: 'overloaded' }),
      ).toBe(15);
      expect(await counter('ranker_scoring_rows_total', 'bounded')).toBe(100);
    });

    it('admit() refuses as score() would while the queue is full, queueing nothing, and lets in what fits', async () => {
      await load('gated', { batching: { maxQueueRows: 100, maxQueueDelayMicros: 50_000 } });
      expect(() => engine.admit('gated', 100)).not.toThrow();
      const held = [0, 1, 2, 3, 4].map((i) => score('gated', ctrFeeds(20, 500 + i)));
      expect(() => engine.admit('gated', 0)).not.toThrow();
      expect(() => engine.admit('gated', 1)).toThrow(OverloadedError);
      expect(() => engine.admit('gated', 101)).toThrow(RequestTooLargeError);
      expect(() => engine.admit('nothing-here', 1)).toThrow('model nothing-here is not loaded');
      expect(engine.queueDepth()).toEqual({ queuedRows: 100, maxQueueRows: 100 });
      await bounded(Promise.all(held), 'held requests');
      expect(() => engine.admit('gated', 100)).not.toThrow();
      expect(
        await counter('ranker_scoring_rejections_total', 'gated', { reason: 'overloaded' }),
      ).toBe(1);
      expect(
        await counter('ranker_scoring_rejections_total', 'gated', { reason: 'too_large' }),
      ).toBe(1);
      expect(await counter('ranker_scoring_rows_total', 'gated')).toBe(100);
    });

    it('refuses with OverloadedError once queued rows have waited past SCORING_MAX_QUEUE_WAIT_MS, and scores what it took', async () => {
      await engine.onApplicationShutdown();
      useEngine({ SCORING_MAX_QUEUE_WAIT_MS: 5 });
      await load('waited', { batching: { maxBatchRows: 512, maxQueueDelayMicros: 0 } });
      const feeds = ctrFeeds(3000, 60);
      const out = score('waited', feeds);
      // One batch runs, one waits behind it, ~2,000 rows wait here. Batches leave only from this
      // thread's turns, so while it is held the oldest rows' wait grows past the bound.
      expect(engine.queueDepth().queuedRows).toBe(3000 - 2 * 500);
      expect(() => engine.admit('waited', 1)).not.toThrow();
      for (const until = performance.now() + 20; performance.now() < until;);
      expect(() => engine.admit('waited', 1)).toThrow(OverloadedError);
      expect(() => engine.admit('waited', 1)).toThrow(/have waited \d+ ms, past maxQueueWaitMs 5/);
      expectClose((await bounded(out, 'the request taken')).ctr.data, await raw(feeds));
      expect(() => engine.admit('waited', 1)).not.toThrow();
      expect(
        await counter('ranker_scoring_rejections_total', 'waited', { reason: 'queue_wait' }),
      ).toBe(2);
    });

    it('refuses a request larger than maxQueueRows for good with RequestTooLargeError, and scores the next', async () => {
      const { maxRequestRows } = await load('small', { batching: { maxQueueRows: 64 } });
      expect(maxRequestRows).toBe(64);
      const error = (await bounded(
        score('small', ctrFeeds(65, 7)).then(
          () => undefined,
          (e: unknown) => e,
        ),
        'refusal',
      )) as RankerError;
      expect(error).toBeInstanceOf(RequestTooLargeError);
      expect(error).not.toBeInstanceOf(OverloadedError);
      expect(error.code).toBe('REQUEST_TOO_LARGE');
      expect(error.status).toBe(413);
      expect(error.message).toContain('65 rows can never be queued: maxQueueRows is 64');
      // Nothing was queued for it; a request of exactly maxQueueRows is scored.
      expect(engine.queueDepth()).toEqual({ queuedRows: 0, maxQueueRows: 64 });
      const fits = ctrFeeds(64, 8);
      expectClose((await bounded(score('small', fits), 'score')).ctr.data, await raw(fits));
      expect(
        await counter('ranker_scoring_rejections_total', 'small', { reason: 'too_large' }),
      ).toBe(1);
      expect(
        await counter('ranker_scoring_rejections_total', 'small', { reason: 'overloaded' }),
      ).toBe(0);
      // The engine default when the bundle says nothing.
      expect((await load('default')).maxRequestRows).toBe(DEFAULT_BATCHING.maxQueueRows);
    });
  });

  describe('deadlines', () => {
    it('rejects a request whose deadline has passed without scoring its rows', async () => {
      await load('late');
      await bounded(score('late', ctrFeeds(4, 1)), 'score');
      const error = await rejectionOf(
        score('late', ctrFeeds(50, 2), performance.now() - 1),
        'expired request',
      );
      expect(error).toBeInstanceOf(DeadlineExceededError);
      expect((error as RankerError).code).toBe('DEADLINE_EXCEEDED');
      expect(await counter('ranker_scoring_rows_total', 'late')).toBe(4);
      expect(await batches('late')).toMatchObject({ count: 1, rows: 4 });
      expect(await counter('ranker_scoring_rejections_total', 'late', { reason: 'deadline' })).toBe(
        1,
      );
    });

    it('drops a request queued behind a busy instance once its deadline passes, before inference', async () => {
      await load('busy', { batching: { maxBatchRows: 65_536, maxQueueDelayMicros: 0 } });
      const instance = engine.pool('busy')!.live[0];
      // About 30,000 rows keep the single instance busy far longer than the 30 ms deadline.
      const big = score('busy', ctrFeeds(30_000, 3));
      expect(instance.load).toBeGreaterThan(0);
      const error = await rejectionOf(
        score('busy', ctrFeeds(10, 4), performance.now() + 30),
        'queued request',
      );
      expect(error).toBeInstanceOf(DeadlineExceededError);
      expect(instance.load).toBeGreaterThan(0); // dropped while the big batch still ran
      await bounded(big, 'big request');
      expect(await counter('ranker_scoring_rows_total', 'busy')).toBe(30_000);
      expect(await batches('busy', 65_536)).toMatchObject({ count: 1, rows: 30_000 });
    });

    it('answers a request whose rows are running at its deadline, and drops only its share of the late batch', async () => {
      // One batch holds both requests: the preferred size fills only with both, and the queue
      // delay is 10 minutes.
      await load('running', {
        batching: {
          maxBatchRows: 65_536,
          maxQueueDelayMicros: FOREVER_MICROS,
          preferredBatchRows: [30_010],
        },
      });
      const instance = engine.pool('running')!.live[0];
      const neighbourFeeds = ctrFeeds(10, 5);
      // About 30,000 rows keep the instance busy far longer than the 30 ms deadline.
      const late = score('running', ctrFeeds(30_000, 4), performance.now() + 30);
      const neighbour = score('running', neighbourFeeds);
      expect(instance.load).toBe(1);
      const error = await rejectionOf(late, 'request running at its deadline');
      expect(error).toBeInstanceOf(DeadlineExceededError);
      expect((error as RankerError).status).toBe(504);
      expect(error.message).toMatch(/30000 of 30000 rows unscored/);
      expect(instance.load).toBe(1); // answered at the deadline, while its batch still ran
      const out = await bounded(neighbour, 'the other request in the same batch');
      expect(out.ctr.dims).toEqual([10, 1]);
      expectClose(out.ctr.data, await raw(neighbourFeeds));
      expect(await batches('running', 65_536)).toMatchObject({ count: 1, rows: 30_010 });
      expect(
        await counter('ranker_scoring_rejections_total', 'running', { reason: 'deadline' }),
      ).toBe(1);
      expect(engine.pool('running')!.budget.inUse).toBe(0);
    });
  });

  describe('input checks', () => {
    it('rejects bad feeds with ModelInputError naming the input, and keeps serving', async () => {
      await load('inputs');
      const good = ctrFeeds(3, 5);
      const cases: [string, InputFeeds, string][] = [
        [
          'wrong dtype',
          { ...good, dense: { dtype: 'int64', data: new BigInt64Array(39), dims: [3, 13] } },
          'dense',
        ],
        [
          'wrong column count',
          { ...good, dense: { dtype: 'float32', data: new Float32Array(36), dims: [3, 12] } },
          'dense',
        ],
        [
          'rows differing between inputs',
          { ...good, dense: { dtype: 'float32', data: new Float32Array(26), dims: [2, 13] } },
          'dense',
        ],
        ['missing input', { sparse_ids: good.sparse_ids }, 'dense'],
        [
          'unknown input',
          { ...good, extra: { dtype: 'float32', data: new Float32Array(3), dims: [3, 1] } },
          'extra',
        ],
      ];
      for (const [what, feeds, input] of cases) {
        const error = await rejectionOf(engine.score('inputs', feeds), what);
        expect(error).toBeInstanceOf(ModelInputError);
        expect((error as ModelInputError).code).toBe('MODEL_INPUT_INVALID');
        expect(error.message).toContain(`'${input}'`);
        expect((error as ModelInputError).details.map((d) => d.path)).toContain(input);
      }
      expect(await counter('ranker_scoring_rows_total', 'inputs')).toBe(0);
      const out = await bounded(score('inputs', good), 'good request');
      expectClose(out.ctr.data, await raw(good));
    });
  });

  describe('empty requests', () => {
    it('answers a request with no rows with empty outputs, without running a batch', async () => {
      await load('empty', { batching: { maxQueueDelayMicros: 0 } });
      const out = await bounded(score('empty', ctrFeeds(0, 1)), 'empty request');
      expect(out.ctr.dims).toEqual([0, 1]);
      expect(out.ctr.data).toHaveLength(0);
      expect(await batches('empty')).toMatchObject({ count: 0, rows: 0 });
      const feeds = ctrFeeds(3, 2);
      expectClose(
        (await bounded(score('empty', feeds), 'next request')).ctr.data,
        await raw(feeds),
      );
    });
  });

  describe('loading', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'ranker-engine-spec-'));
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('rejects a file that is not ONNX with ModelLoadError and keeps serving other models', async () => {
      await load('good');
      const junk = join(dir, 'junk.onnx');
      await writeFile(junk, 'this is not an ONNX model');
      const error = await rejectionOf(load('junk', { file: junk }), 'load junk');
      expect(error).toBeInstanceOf(ModelLoadError);
      expect((error as ModelLoadError).code).toBe('MODEL_LOAD_FAILED');
      expect(engine.pool('junk')).toBeUndefined();
      await expect(engine.score('junk', ctrFeeds(1, 1))).rejects.toThrow(/not loaded/);
      const feeds = ctrFeeds(5, 6);
      expectClose((await bounded(score('good', feeds), 'score')).ctr.data, await raw(feeds));
    });

    (existsSync('/dev/nvidiactl') ? it.skip : it)(
      'refuses a model that asks only for an unavailable provider (no GPU here)',
      async () => {
        const error = await rejectionOf(
          load('gpu', { session: { executionProviders: ['cuda'] } }),
          'load on cuda',
        );
        expect(error).toBeInstanceOf(ExecutionProviderUnavailableError);
        expect((error as RankerError).code).toBe('EXECUTION_PROVIDER_UNAVAILABLE');
        expect(engine.pool('gpu')).toBeUndefined();
      },
    );

    (existsSync('/dev/nvidiactl') ? it.skip : it)(
      'falls back along the provider list to cpu',
      async () => {
        const info = await load('fallback', {
          session: { executionProviders: ['tensorrt', 'cuda', 'cpu'] },
        });
        expect(info.provider).toBe('cpu');
        const feeds = ctrFeeds(3, 8);
        expectClose((await bounded(score('fallback', feeds), 'score')).ctr.data, await raw(feeds));
      },
    );

    it('replaces a model loaded twice under the same id', async () => {
      await load('twice');
      const before = engine.pool('twice')!;
      const oldInstance = before.live[0];
      await load('twice', { instances: 2 });
      const after = engine.pool('twice')!;
      expect(after).not.toBe(before);
      expect(before.live).toHaveLength(0);
      expect(oldInstance.isAlive).toBe(false);
      expect(after.live).toHaveLength(2);
      const feeds = ctrFeeds(600, 9);
      expectClose((await bounded(score('twice', feeds), 'score')).ctr.data, await raw(feeds));
    });

    it('starts the instances one after another with staggeredStart, all at once without', async () => {
      const pool = (staggeredStart: boolean) =>
        new InstancePool(
          resolveModelOptions({ id: 'pool', file: MODEL, instances: 3, staggeredStart }, 1),
          () => undefined,
          new CoreBudget(2),
          new ThreadReserve(0, 0),
        );
      const budget = new CoreBudget(2);
      const staggered = new InstancePool(
        resolveModelOptions({ id: 'pool', file: MODEL, instances: 3, staggeredStart: true }, 1),
        () => undefined,
        budget,
        new ThreadReserve(0, 0),
      );
      const starting = staggered.start();
      await Promise.resolve();
      expect(staggered.live).toHaveLength(1);
      // A starting instance holds no core slot: serving batches keep them all.
      expect(budget.inUse).toBe(0);
      await bounded(starting, 'staggered start');
      expect(staggered.live).toHaveLength(3);
      expect(budget.inUse).toBe(0);
      await staggered.close();
      const together = pool(false);
      const all = together.start();
      expect(together.live).toHaveLength(3);
      await bounded(all, 'start');
      await together.close();
    });

    it('unload fails queued work and later requests fail fast', async () => {
      await load('gone', { batching: { maxQueueDelayMicros: FOREVER_MICROS } });
      const queued = rejectionOf(score('gone', ctrFeeds(10, 10)), 'queued request');
      await engine.unload('gone');
      const error = await queued;
      expect(error).toBeInstanceOf(WorkerCrashedError);
      expect(error.message).toMatch(/unloaded/);
      expect(engine.pool('gone')).toBeUndefined();
      await expect(engine.score('gone', ctrFeeds(1, 1))).rejects.toThrow(/not loaded/);
      expect(
        await counter('ranker_scoring_rejections_total', 'gone', { reason: 'worker_crashed' }),
      ).toBe(1);
      expect(await counter('ranker_scoring_rows_total', 'gone')).toBe(0);
    });
  });

  describe('worker crash', () => {
    // The thread is stopped before it can start the batch, never inside session.run: stopping a
    // worker while onnxruntime-node runs aborts the whole process ("terminate called after
    // throwing an instance of 'Napi::Error'"), whatever the engine does.
    it('fails the batch in flight with WorkerCrashedError, replaces the worker and keeps serving', async () => {
      await load('crash', { batching: { maxQueueDelayMicros: 0 } });
      const pool = engine.pool('crash')!;
      const dead = pool.live[0];
      // terminate() stops the thread at once, but its exit event arrives only after this
      // synchronous block, so the engine still dispatches the batch to the dying worker.
      void dead.worker.terminate();
      const inFlight = score('crash', ctrFeeds(500, 12));
      expect(dead.load).toBeGreaterThan(0);
      const error = await rejectionOf(inFlight, 'request in flight on the dead worker');
      expect(error).toBeInstanceOf(WorkerCrashedError);
      expect((error as RankerError).code).toBe('WORKER_CRASHED');
      expect(error.message).toMatch(/batch in flight/);
      expect(dead.isAlive).toBe(false);
      expect(await counter('ranker_scoring_worker_restarts_total', 'crash')).toBe(1);
      expect(
        await counter('ranker_scoring_rejections_total', 'crash', { reason: 'worker_crashed' }),
      ).toBe(1);

      const feeds = ctrFeeds(20, 13);
      const out = await bounded(score('crash', feeds), 'request after the crash');
      expectClose(out.ctr.data, await raw(feeds));
      expect(pool.live).toHaveLength(1);
      expect(pool.live[0]).not.toBe(dead);
      expect(pool.live[0].isAlive).toBe(true);
    });

    it('a worker dying with requests queued behind its batch leaks no core slot and every later request completes', async () => {
      // One request per batch: each queued request is a batch of its own, so on a leak each
      // takes one of the two slots and nothing is dispatched anywhere again.
      await load('leak', { batching: { enabled: false, maxQueueDelayMicros: 0 } });
      // The core budget is shared by every model: a leaked slot would stop this one too.
      await load('neighbour');
      const pool = engine.pool('leak')!;
      const dead = pool.live[0];
      void dead.worker.terminate();
      const inFlight = score('leak', ctrFeeds(500, 14));
      // Two small requests wait in the batcher for the busy instance (a shallow backlog).
      const queuedFeeds = [ctrFeeds(10, 15), ctrFeeds(10, 16)];
      const queued = queuedFeeds.map((feeds) => score('leak', feeds));
      expect(dead.load).toBe(1);
      expect(await rejectionOf(inFlight, 'request in flight on the dead worker')).toBeInstanceOf(
        WorkerCrashedError,
      );
      // Each queued request runs on the replacement or fails as a crash, never hangs.
      const results = await bounded(Promise.allSettled(queued), 'requests queued at the crash');
      for (let i = 0; i < results.length; i++) {
        const r = results[i];
        if (r.status === 'fulfilled') expectClose(r.value.ctr.data, await raw(queuedFeeds[i]));
        else expect((r.reason as RankerError).code).toBe('WORKER_CRASHED');
      }
      for (let i = 0; i < 4; i++) {
        for (const id of ['leak', 'neighbour']) {
          const feeds = ctrFeeds(20, 20 + i);
          const out = await bounded(score(id, feeds), `${id}: request ${i} after the crash`);
          expectClose(out.ctr.data, await raw(feeds));
        }
      }
      expect(pool.budget.inUse).toBe(0);
      expect(engine.pool('neighbour')!.budget.inUse).toBe(0);
    });
  });
});

describe('helperNice', () => {
  it("puts the process's helper threads one step below the model threads, within Linux's range", () => {
    expect(helperNice(10)).toBe(11);
    expect(helperNice(19)).toBe(19);
    // SCORING_WORKER_NICE 0: the model threads run at the event loop's nice, nothing is lowered.
    expect(helperNice(0)).toBe(0);
  });
});
