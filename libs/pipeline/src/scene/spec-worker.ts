/**
 * Child process entry of spec-thread.ts: reads pipeline.yaml texts (one message each) and
 * golden.jsonl texts (a part per request), for as long as it lives (its modules load once, not
 * once per bundle). Its first argument is the nice value it runs at (SPEC_READER_NICE).
 */
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';
import type { GoldenPart } from './golden-parts';
import type { FromSpecWorker, ToSpecWorker } from './spec-thread';

lowerEveryThread(Number(process.argv[2] ?? 0));
// Required only now, so that loading it (the YAML parser, the schema and the libs they bring:
// most of this process's start, ~0.6 s of CPU built) already runs at the lowered priority.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { readSpecText } = require('./spec-text') as typeof import('./spec-text');
// The serving process is gone (or dropped its reader): nothing is left to answer.
process.on('disconnect', () => process.exit(0));

/** Golden readings in progress, by id: the parts not yet asked for. */
const golden = new Map<number, Iterator<GoldenPart>>();

process.on('message', (message: ToSpecWorker) => {
  const { id } = message;
  const post = (reply: FromSpecWorker) => process.send?.(reply);
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

/**
 * On Linux a nice value belongs to a thread, and threads start at their creator's: V8's platform
 * threads (which compile the parser) are running already, so each is lowered by its id, and the
 * main thread last, so those started later (libuv's pool) inherit it. Lowering needs no
 * privilege; a platform without /proc lowers the main thread only. The loop is
 * lowerHelperThreads' (@app/common) again, on purpose: that one comes with the common barrel,
 * whose load (~0.5 s of CPU, built) would run at the parent's nice before any lowering, and the
 * house's import rule allows no deep import of it.
 */
function lowerEveryThread(nice: number): void {
  if (!(nice > 0)) return;
  let tids: string[] = [];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    // Not Linux.
  }
  for (const tid of tids) {
    if (Number(tid) === process.pid) continue;
    try {
      setPriority(Number(tid), nice);
    } catch {
      // The thread ended between the listing and now.
    }
  }
  try {
    setPriority(0, nice);
  } catch {
    // Not allowed here: the reader runs at its parent's priority.
  }
}
