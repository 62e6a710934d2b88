/** Worker thread entry of spec-thread.ts: reads one pipeline.yaml text and posts the result. */
import { parentPort, workerData } from 'node:worker_threads';
import { readSpecText } from './spec-text';

parentPort!.postMessage(readSpecText((workerData as { text: string }).text));
