/**
 * One core's share of the raw limit's parallel layout: a worker thread with one single-threaded
 * onnxruntime session per model of the scene, scoring all of them over its own rows in a closed
 * loop. Started by raw-limit.ts; imports stay relative (a bare Worker loads this file).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { rawSession } from './bench-util';
import { checkSessionInputs, randomTensors, RawModelSpec } from './raw-feeds';

export interface RawWorkerInit {
  specs: RawModelSpec[];
  batch: number;
  seed: number;
}
export type ToRawWorker = { type: 'run'; ms: number } | { type: 'close' };
export type FromRawWorker =
  | { type: 'ready' }
  | { type: 'done'; rows: number; elapsedMs: number }
  | { type: 'failed'; message: string };

const init = workerData as RawWorkerInit;
const port = parentPort!;
const post = (message: FromRawWorker) => port.postMessage(message);

async function main(): Promise<void> {
  const models: { session: InferenceSession; feeds: Record<string, Tensor> }[] = [];
  for (const spec of init.specs) {
    const session = await rawSession(spec.file, 1);
    checkSessionInputs(spec, session);
    const feeds = randomTensors(spec, init.batch, init.seed);
    models.push({ session, feeds });
  }
  for (let i = 0; i < 3; i++) for (const m of models) await m.session.run(m.feeds);
  port.on('message', (message: ToRawWorker) => {
    if (message.type === 'close') {
      void Promise.all(models.map((m) => m.session.release())).then(() => port.close());
      return;
    }
    void (async () => {
      let rows = 0;
      const start = performance.now();
      while (performance.now() - start < message.ms) {
        for (const m of models) await m.session.run(m.feeds);
        rows += init.batch;
      }
      post({ type: 'done', rows, elapsedMs: performance.now() - start });
    })().catch((error: Error) => post({ type: 'failed', message: error.message }));
  });
  post({ type: 'ready' });
}

main().catch((error: Error) => post({ type: 'failed', message: error.message }));
