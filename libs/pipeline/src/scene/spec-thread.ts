import { Worker } from 'node:worker_threads';
import { extname, join } from 'node:path';
import type { GoldenPart } from './golden-parts';
import { PIPELINE_FILE, SpecTextReading } from './spec-text';

const WORKER_FILE = join(__dirname, `spec-worker${extname(__filename)}`);
const WORKER_EXEC_ARGV = extname(__filename) === '.ts' ? ['--require', '@swc-node/register'] : [];

/** How long a reading (or one golden part) may take, and the memory its reader may use. */
export const SPEC_READ_LIMITS = { timeoutMs: 30_000, maxOldGenerationSizeMb: 256 };

type Limits = typeof SPEC_READ_LIMITS;

/** What the reader thread is asked (spec-worker.ts): a golden reading is asked part by part. */
export type ToSpecWorker =
  | { kind: 'spec'; id: number; text: string }
  | { kind: 'golden'; id: number; bytes: Uint8Array }
  | { kind: 'next'; id: number }
  | { kind: 'close'; id: number };

/** Its answers: a reading, or a golden part (undefined once the file has no more). */
export type FromSpecWorker =
  { id: number; reading: SpecTextReading } | { id: number; part: GoldenPart | undefined };

/** Why the thread gave no answer (out of time, out of memory, stopped). */
interface Refused {
  id: number;
  refused: string;
}

/**
 * One worker thread that reads bundle texts: pipeline.yaml (readSpecText) and golden.jsonl
 * (goldenParts), one question at a time. It lives on between bundles: starting it loads the YAML
 * parser and the schema (~0.4 s of CPU), which a live load must not pay beside traffic. A
 * question that runs out of time is abandoned with its thread, and one that runs out of memory
 * takes only its thread; the next question starts a new one.
 */
class SpecReaderThread {
  private worker: Worker | undefined;
  private nextId = 0;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly limits: Limits) {}

  newId(): number {
    return ++this.nextId;
  }

  /** `transfer`: buffers of `message` that move to the thread (no copy; unusable here after). */
  ask(message: ToSpecWorker, transfer: ArrayBuffer[] = []): Promise<FromSpecWorker | Refused> {
    const answer = this.queue.then(() => this.askNow(message, transfer));
    this.queue = answer;
    return answer;
  }

  /** A message that needs no answer, for the thread as it is now (none: nothing to tell). */
  tell(message: ToSpecWorker): void {
    this.worker?.postMessage(message);
  }

  private askNow(
    message: ToSpecWorker,
    transfer: ArrayBuffer[],
  ): Promise<FromSpecWorker | Refused> {
    const worker = (this.worker ??= this.start());
    const { id } = message;
    return new Promise((resolve) => {
      const done = (answer: FromSpecWorker | Refused) => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        resolve(answer);
      };
      const refuse = (refused: string) => {
        if (this.worker === worker) this.worker = undefined;
        done({ id, refused });
      };
      const onMessage = (answer: FromSpecWorker) => {
        if (answer.id === id) done(answer);
      };
      const onError = (error: Error) => refuse(`could not be read: ${error.message}`);
      const onExit = () => refuse('could not be read: its reader stopped without an answer');
      const timer = setTimeout(() => {
        refuse(`not read within ${this.limits.timeoutMs} ms; abandoned`);
        void worker.terminate();
      }, this.limits.timeoutMs);
      worker.on('message', onMessage);
      worker.once('error', onError);
      worker.once('exit', onExit);
      worker.postMessage(message, transfer);
    });
  }

  private start(): Worker {
    const worker = new Worker(WORKER_FILE, {
      execArgv: WORKER_EXEC_ARGV,
      resourceLimits: { maxOldGenerationSizeMb: this.limits.maxOldGenerationSizeMb },
    });
    // An idle reader never keeps the process alive; whenever it dies, the next question starts anew.
    worker.unref();
    const forget = () => {
      if (this.worker === worker) this.worker = undefined;
    };
    worker.on('error', forget);
    worker.on('exit', forget);
    return worker;
  }
}

const shared = new Map<Limits, SpecReaderThread>();

function readerFor(limits: Limits): SpecReaderThread {
  let reader = shared.get(limits);
  if (!reader) shared.set(limits, (reader = new SpecReaderThread(limits)));
  return reader;
}

/**
 * readSpecText in a worker thread, so a large or hostile pipeline.yaml (the `yaml` package parses
 * 1 MB in seconds) never stalls the requests served meanwhile. A reading that runs out of time or
 * memory is a refusal of the file, not a crash of the process.
 */
export async function readSpecOffThread(
  text: string,
  limits = SPEC_READ_LIMITS,
): Promise<SpecTextReading> {
  const reader = readerFor(limits);
  const answer = await reader.ask({ kind: 'spec', id: reader.newId(), text });
  if ('refused' in answer)
    return { ok: false, errors: [{ path: PIPELINE_FILE, message: answer.refused }] };
  if (!('reading' in answer)) throw new Error('spec reader answered a spec with a golden part');
  return answer.reading;
}

/** golden.jsonl's parts, asked for one at a time (see readGoldenOffThread). */
export interface GoldenReader {
  /** The next part; undefined once there is none. A refusal is a part at line 0, the last. */
  next(): Promise<GoldenPart | undefined>;
  /** Drops what the thread holds of the reading (call it when stopping before the end). */
  close(): void;
}

/**
 * goldenParts in the reader thread, one part per question: `bytes` (golden.jsonl as read; its
 * ArrayBuffer moves to the thread where `bytes` spans it, see ownBuffer) are decoded,
 * and each line parsed and validated there (a line may be megabytes of JSON); the serving thread
 * takes in one part of at most GOLDEN_PART_CANDIDATES candidates per event-loop turn, when it
 * asks for it. A reading that runs out of time (per part) or memory ends with a part at line 0
 * saying why.
 */
export function readGoldenOffThread(bytes: Uint8Array, limits = SPEC_READ_LIMITS): GoldenReader {
  const reader = readerFor(limits);
  const id = reader.newId();
  // Held until it is sent: the file can be megabytes.
  let unsent: Uint8Array | undefined = bytes;
  let state: 'new' | 'reading' | 'over' = 'new';
  return {
    async next() {
      if (state === 'over') return undefined;
      const sending = unsent;
      unsent = undefined;
      const answer = await (sending === undefined
        ? reader.ask({ kind: 'next', id })
        : reader.ask({ kind: 'golden', id, bytes: sending }, ownBuffer(sending)));
      state = 'reading';
      if ('refused' in answer) {
        state = 'over';
        return { line: 0, error: answer.refused };
      }
      if (!('part' in answer)) throw new Error('spec reader answered a golden part with a spec');
      if (answer.part === undefined) state = 'over';
      return answer.part;
    },
    close() {
      if (state === 'reading') reader.tell({ kind: 'close', id });
      unsent = undefined;
      state = 'over';
    },
  };
}

/**
 * `bytes`' ArrayBuffer to transfer when the view spans it (to one spare byte, which
 * BundleFiles.readBytes leaves), so that no other view can lose its memory: a view into a larger
 * buffer (a pooled Buffer) is copied instead.
 */
function ownBuffer(bytes: Uint8Array): ArrayBuffer[] {
  const { buffer } = bytes;
  const spans = bytes.byteOffset === 0 && buffer.byteLength <= bytes.byteLength + 1;
  return spans && buffer instanceof ArrayBuffer ? [buffer] : [];
}
