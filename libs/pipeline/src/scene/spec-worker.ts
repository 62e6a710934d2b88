/**
 * Worker thread entry of spec-thread.ts: reads pipeline.yaml texts, one message each, for as long
 * as it lives (its modules load once, not once per bundle).
 */
import { parentPort } from 'node:worker_threads';
import { readSpecText } from './spec-text';

parentPort!.on('message', ({ id, text }: { id: number; text: string }) => {
  parentPort!.postMessage({ id, reading: readSpecText(text) });
});
