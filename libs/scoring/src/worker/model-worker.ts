/**
 * Entry point of a model worker thread: one onnxruntime session at a time. onnxruntime-node's
 * run() executes synchronously on the thread that calls it, so inference lives here and never
 * on the event-loop thread. A thread starts without a model (starting it and loading
 * onnxruntime is most of its cost, the same for every model): `init` gives it one, `release`
 * ends that session, and the thread can then serve another model (see ThreadReserve). Imports
 * stay relative (no @app aliases): this file is loaded by a bare Worker.
 */
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { readModelMetadata } from '../onnx-metadata';
import { elementCount, ModelMetadata, rowWidth } from '../tensor-types';
import { FromWorker, ToWorker, WireTensor, WorkerBoot, WorkerInit } from './worker-protocol';

const boot = workerData as WorkerBoot;
const port = parentPort!;
const post = (message: FromWorker, transfer: ArrayBuffer[] = []) =>
  port.postMessage(message, transfer);

async function createSession(init: WorkerInit): Promise<{
  session: InferenceSession;
  provider: string;
  skipped: string[];
}> {
  const skipped: string[] = [];
  let lastError: unknown;
  for (const provider of init.session.executionProviders) {
    try {
      const session = await InferenceSession.create(init.file, {
        executionProviders: [provider],
        intraOpNumThreads: init.session.intraOpThreads,
        interOpNumThreads: 1,
        executionMode: 'sequential',
        graphOptimizationLevel: init.session.graphOptimizationLevel,
      });
      return { session, provider, skipped };
    } catch (error) {
      lastError = error;
      const message = (error as Error).message;
      // A file that is not a model fails the same way on every provider: stop at the first.
      if (/^Load model from/.test(message)) {
        throw Object.assign(new Error(message), { code: 'MODEL_LOAD_FAILED' });
      }
      skipped.push(`${provider}: ${message.split('\n')[0]}`);
    }
  }
  throw Object.assign(
    new Error(
      `no execution provider of [${init.session.executionProviders.join(', ')}] is available (${skipped.join('; ')})`,
    ),
    { code: 'EXECUTION_PROVIDER_UNAVAILABLE', cause: lastError },
  );
}

function zeroFeeds(metadata: ModelMetadata, rows: number): Record<string, Tensor> {
  const feeds: Record<string, Tensor> = {};
  for (const input of metadata.inputs) {
    const dims = input.shape.map((d, i) =>
      typeof d === 'number' && d >= 0 ? d : i === 0 ? rows : 1,
    );
    const size = elementCount(dims);
    feeds[input.name] =
      input.dtype === 'int64'
        ? new Tensor('int64', new BigInt64Array(size), dims)
        : new Tensor(input.dtype as 'float32', new Float32Array(size), dims);
  }
  return feeds;
}

/** Rows [start, end) of a batch's input as a tensor: a view of its buffer, nothing copied. */
function toTensor(wire: WireTensor, start: number, end: number): Tensor {
  const width = rowWidth(wire.dims);
  const dims = [end - start, ...wire.dims.slice(1)];
  const data =
    wire.dtype === 'int64'
      ? new BigInt64Array(wire.buffer, start * width * 8, (end - start) * width)
      : new Float32Array(wire.buffer, start * width * 4, (end - start) * width);
  return new Tensor(wire.dtype, data, dims);
}

type Outputs = Record<string, Tensor>;
/** What onnxruntime gives numeric outputs as (the bundle gate admits float32 scores only). */
type NumericArray = Float32Array | Float64Array | Int32Array | BigInt64Array | Uint8Array;

/**
 * Runs a batch as balanced parts of at most `maxRunRows` rows, one after another (0, or a batch
 * that fits: one run). On CPUs a row can cost onnxruntime less in runs of a few hundred rows than
 * in runs of thousands (measured: README, Scoring engine), and parts cost no more messages than
 * the batch. Each output is the parts' outputs in order, in an array of the same type.
 */
async function runInParts(
  session: InferenceSession,
  wires: Record<string, WireTensor>,
  maxRunRows: number,
): Promise<Outputs> {
  const entries = Object.entries(wires);
  const rows = entries[0][1].dims[0];
  const parts = maxRunRows > 0 ? Math.ceil(rows / maxRunRows) : 1;
  const feedsOf = (start: number, end: number) => {
    const feeds: Record<string, Tensor> = {};
    for (const [name, wire] of entries) feeds[name] = toTensor(wire, start, end);
    return feeds;
  };
  if (parts <= 1) return (await session.run(feedsOf(0, rows))) as Outputs;
  const joined: Record<string, { data: NumericArray; width: number; dims: number[] }> = {};
  let start = 0;
  for (let part = 1; part <= parts; part++) {
    const end = Math.round((part * rows) / parts);
    const results = await session.run(feedsOf(start, end));
    for (const [name, value] of Object.entries(results) as [string, Tensor][]) {
      if (value.dims[0] !== end - start)
        throw new Error(
          `output ${name} has ${value.dims[0]} rows for a run of ${end - start}: maxRunRows needs every output's first dimension to be the batch`,
        );
      const data = value.data as NumericArray;
      const width = rowWidth(value.dims);
      const out = (joined[name] ??= {
        data: new (data.constructor as new (length: number) => NumericArray)(rows * width),
        width,
        dims: [rows, ...value.dims.slice(1)],
      });
      out.data.set(data as never, start * out.width);
    }
    start = end;
  }
  const outputs: Outputs = {};
  for (const [name, { data, dims }] of Object.entries(joined))
    outputs[name] = new Tensor(data as Float32Array, dims);
  return outputs;
}

/** Output arrays go back transferred; copy only if onnxruntime's array is a view into a larger buffer. */
function toWire(value: Tensor): WireTensor {
  const data = value.data as Float32Array;
  const whole = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength;
  const buffer = (whole ? data.buffer : data.slice().buffer) as ArrayBuffer;
  return { dtype: 'float32', buffer, dims: [...value.dims] };
}

/** A thread's model: its session and how it runs a batch. */
interface Loaded {
  session: InferenceSession;
  maxRunRows: number;
}

/** Creates and warms the session of `init`; undefined (after `init-failed`) when it cannot. */
async function start(init: WorkerInit): Promise<Loaded | undefined> {
  let created;
  try {
    created = await createSession(init);
  } catch (error) {
    const code =
      (error as { code?: string }).code === 'EXECUTION_PROVIDER_UNAVAILABLE'
        ? 'EXECUTION_PROVIDER_UNAVAILABLE'
        : 'MODEL_LOAD_FAILED';
    post({ type: 'init-failed', code, message: (error as Error).message });
    return undefined;
  }
  const { session, provider, skipped } = created;
  const metadata = readModelMetadata(session);
  const started = performance.now();
  try {
    for (let i = 0; i < init.warmup.batches; i++)
      await session.run(zeroFeeds(metadata, init.warmup.rows));
  } catch (error) {
    post({
      type: 'init-failed',
      code: 'MODEL_LOAD_FAILED',
      message: `warm-up failed: ${(error as Error).message}`,
    });
    await session.release();
    return undefined;
  }
  post({ type: 'ready', provider, metadata, warmupMs: performance.now() - started, skipped });
  return { session, maxRunRows: init.session.maxRunRows };
}

async function run(
  { session, maxRunRows }: Loaded,
  message: Extract<ToWorker, { type: 'run' }>,
): Promise<void> {
  const { batchId } = message;
  try {
    const t0 = performance.now();
    const results = await runInParts(session, message.feeds, maxRunRows);
    const computeMs = performance.now() - t0;
    const outputs: Record<string, WireTensor> = {};
    for (const [name, value] of Object.entries(results)) outputs[name] = toWire(value);
    // run() is over: onnxruntime holds no view of the inputs, which go back to be used again
    // (each once, and never one that is also an output).
    const outputBuffers = new Set(Object.values(outputs).map((o) => o.buffer));
    const inputs = [...new Set(Object.values(message.feeds).map((f) => f.buffer))].filter(
      (buffer) => !outputBuffers.has(buffer),
    );
    post({ type: 'result', batchId, outputs, computeMs, inputs }, [...outputBuffers, ...inputs]);
  } catch (error) {
    post({ type: 'run-failed', batchId, message: (error as Error).message });
  }
}

function main(): void {
  // First, so that threads onnxruntime starts inherit it. On Linux a nice value belongs to a
  // thread: this lowers this worker only, never the event loop.
  if (boot.nice > 0) setPriority(0, boot.nice);
  let session: Promise<Loaded | undefined> = Promise.resolve(undefined);
  // Messages are handled in order: a run waits for its init, a release for the runs before it.
  let last: Promise<unknown> = Promise.resolve();
  port.on('message', (message: ToWorker) => {
    if (message.type === 'init') {
      last = session = last.then(() => start(message.init));
    } else if (message.type === 'run') {
      const current = session;
      last = last
        .then(() => current)
        .then((s) =>
          s
            ? run(s, message)
            : post({ type: 'run-failed', batchId: message.batchId, message: 'no model loaded' }),
        );
    } else if (message.type === 'release') {
      const ending = session;
      session = Promise.resolve(undefined);
      last = last
        .then(() => ending)
        .then((s) => s?.session.release())
        .then(
          () => post({ type: 'released' }),
          () => post({ type: 'released' }),
        );
    }
  });
  post({ type: 'booted' });
}

main();
