/**
 * Worker thread entry of spec-thread.ts: reads pipeline.yaml texts (one message each) and
 * golden.jsonl texts (a part per request), for as long as it lives (its modules load once, not
 * once per bundle).
 */
import { parentPort } from 'node:worker_threads';
import type { GoldenPart } from './golden-parts';
import { readSpecText } from './spec-text';
import type { FromSpecWorker, ToSpecWorker } from './spec-thread';

const port = parentPort!;
/** Golden readings in progress, by id: the parts not yet asked for. */
const golden = new Map<number, Iterator<GoldenPart>>();

port.on('message', (message: ToSpecWorker) => {
  const { id } = message;
  const post = (reply: FromSpecWorker) => port.postMessage(reply);
  switch (message.kind) {
    case 'spec':
      return post({ id, reading: readSpecText(message.text) });
    case 'golden':
      golden.set(id, goldenModule().goldenParts(decode(message.bytes)));
      return nextPart(id, post);
    case 'next':
      return nextPart(id, post);
    case 'close':
      golden.delete(id);
      return undefined;
  }
});

/**
 * golden-parts.ts, loaded at the first golden reading: the request validation it uses brings the
 * features lib's barrel (~0.35 s of CPU to load, built), which a pipeline.yaml reading (the
 * first thing a new thread is asked) need not wait for.
 */
let loaded: typeof import('./golden-parts') | undefined;
function goldenModule(): typeof import('./golden-parts') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (loaded ??= require('./golden-parts') as typeof import('./golden-parts'));
}

function decode(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

function nextPart(id: number, post: (reply: FromSpecWorker) => void): void {
  const parts = golden.get(id);
  let next: IteratorResult<GoldenPart> | undefined;
  try {
    next = parts?.next();
  } catch (error) {
    golden.delete(id);
    return post({ id, part: { line: 0, error: `could not be read: ${(error as Error).message}` } });
  }
  if (next === undefined || next.done) {
    golden.delete(id);
    return post({ id, part: undefined });
  }
  post({ id, part: next.value });
}
