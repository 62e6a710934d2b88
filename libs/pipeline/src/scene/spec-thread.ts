import { ChildProcess, fork } from 'node:child_process';
import { extname, join } from 'node:path';
import type { GoldenPart } from './golden-parts';
import { PIPELINE_FILE, SpecTextReading } from './spec-text';

const WORKER_FILE = join(__dirname, `spec-worker${extname(__filename)}`);
const WORKER_EXEC_ARGV = extname(__filename) === '.ts' ? ['--require', '@swc-node/register'] : [];

/**
 * How long a reading (or one golden part) may take, the memory its reader may use, and how long a
 * reader with nothing under way lives on.
 */
export const SPEC_READ_LIMITS = { timeoutMs: 30_000, maxOldGenerationSizeMb: 256, idleMs: 30_000 };

/**
 * The nice value the reader process gives all its threads (spec-worker.ts): below every thread
 * of the serving process, the model threads' SCORING_WORKER_NICE included. It never serves: under
 * load a bundle's reading may wait, a request may not.
 */
export const SPEC_READER_NICE = 19;

type Limits = typeof SPEC_READ_LIMITS;

/** What the reader process is asked (spec-worker.ts): a golden reading is asked part by part. */
export type ToSpecWorker =
  | { kind: 'spec'; id: number; text: string }
  | { kind: 'golden'; id: number; bytes: Uint8Array }
  | { kind: 'next'; id: number }
  | { kind: 'close'; id: number };

/** Its answers: a reading, or a golden part (undefined once the file has no more). */
export type FromSpecWorker =
  { id: number; reading: SpecTextReading } | { id: number; part: GoldenPart | undefined };

/** Why the reader gave no answer (out of time, out of memory, stopped). */
interface Refused {
  id: number;
  refused: string;
}

/** The last bytes of the reader's stderr kept, to tell why it died (V8 prints an OOM there). */
const STDERR_TAIL = 4096;

/**
 * One child process that reads bundle texts: pipeline.yaml (readSpecText) and golden.jsonl
 * (goldenParts), one question at a time. A process, not a thread of the serving process: the
 * `yaml` package takes 50-100 ms of CPU over the example's 7 kB pipeline.yaml when its code is
 * cold (as it is at a swap hours after the last), half of it V8 compiling the parser on its
 * platform threads, which a thread of the serving process shares with the serving thread's own
 * collector and compiler. In a process of its own at SPEC_READER_NICE, all of that waits for
 * the cores the serving threads leave. It lives on between the bundles of a burst (a boot, a
 * rollout of several scenes) and leaves after `idleMs` with no question and no golden
 * reading open: an idle process costs memory (~110 MB resident), and starting one (~1 s of CPU,
 * built, to load the YAML parser, the schema and the golden file's validation with the libs they
 * bring) now happens at its low priority, outside the serving process. A question
 * that runs out of time is abandoned with its process, and one that runs out of memory takes only
 * its process; the next question starts a new one.
 */
class SpecReader {
  private child: ChildProcess | undefined;
  /** The tail of each reader's stderr, read once it is gone to say why it went. */
  private readonly stderr = new WeakMap<ChildProcess, string>();
  private nextId = 0;
  private queue: Promise<unknown> = Promise.resolve();
  /** Questions asked and not answered, and golden readings begun and not over. */
  private busy = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(private readonly limits: Limits) {}

  newId(): number {
    return ++this.nextId;
  }

  ask(message: ToSpecWorker): Promise<FromSpecWorker | Refused> {
    this.hold();
    const answer = this.queue.then(() => this.askNow(message));
    // A question that threw (the reader could not even be started) fails alone, not the next ones.
    this.queue = answer.catch(() => undefined).finally(() => this.release());
    return answer;
  }

  /**
   * Keeps the reader while something is under way: a question, or a golden reading between its
   * parts (the reader holds the rest of the file; a new one would answer that there is none).
   */
  hold(): void {
    this.busy++;
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  release(): void {
    if (--this.busy > 0) return;
    this.idleTimer = setTimeout(() => this.retire(), this.limits.idleMs);
    this.idleTimer.unref();
  }

  /** Lets an idle reader go (it exits when its channel closes); the next question starts one. */
  private retire(): void {
    const child = this.child;
    if (this.busy > 0 || child === undefined) return;
    this.child = undefined;
    if (child.connected) child.disconnect();
  }

  /** A message that needs no answer, for the reader as it is now (none: nothing to tell). */
  tell(message: ToSpecWorker): void {
    if (this.child?.connected) this.child.send(message);
  }

  private askNow(message: ToSpecWorker): Promise<FromSpecWorker | Refused> {
    const child = (this.child ??= this.start());
    const { id } = message;
    return new Promise((resolve) => {
      const done = (answer: FromSpecWorker | Refused) => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('error', onError);
        child.off('close', onClose);
        resolve(answer);
      };
      const refuse = (refused: string) => {
        if (this.child === child) this.child = undefined;
        done({ id, refused });
      };
      const onMessage = (answer: FromSpecWorker) => {
        if (answer.id === id) done(answer);
      };
      const onError = (error: Error) => refuse(`could not be read: ${error.message}`);
      // 'close', not 'exit': only then has all of its stderr (V8's word on an OOM) come through.
      const onClose = () =>
        refuse(
          /heap out of memory|heap limit/i.test(this.stderr.get(child) ?? '')
            ? `could not be read: its reader ran out of memory (${this.limits.maxOldGenerationSizeMb} MB)`
            : 'could not be read: its reader stopped without an answer',
        );
      const timer = setTimeout(() => {
        refuse(`not read within ${this.limits.timeoutMs} ms; abandoned`);
        child.kill('SIGKILL');
      }, this.limits.timeoutMs);
      child.on('message', onMessage);
      child.once('error', onError);
      child.once('close', onClose);
      child.send(message, (error) => {
        if (error) refuse(`could not be read: ${error.message}`);
      });
    });
  }

  private start(): ChildProcess {
    const child = fork(WORKER_FILE, [String(SPEC_READER_NICE)], {
      execArgv: [...WORKER_EXEC_ARGV, `--max-old-space-size=${this.limits.maxOldGenerationSizeMb}`],
      // Structured clone, as between threads: typed arrays and undefined survive the trip.
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      this.stderr.set(child, ((this.stderr.get(child) ?? '') + chunk).slice(-STDERR_TAIL));
    });
    // An idle reader never keeps the process alive; whenever it dies, the next question starts anew.
    child.unref();
    child.channel?.unref();
    (child.stderr as { unref?: () => void } | null)?.unref?.();
    const forget = () => {
      if (this.child === child) this.child = undefined;
    };
    child.on('error', forget);
    child.on('exit', forget);
    return child;
  }
}

const shared = new Map<Limits, SpecReader>();

function readerFor(limits: Limits): SpecReader {
  let reader = shared.get(limits);
  if (!reader) shared.set(limits, (reader = new SpecReader(limits)));
  return reader;
}

/**
 * readSpecText in the reader process, so a large or hostile pipeline.yaml (the `yaml` package
 * parses 1 MB in seconds) never stalls the requests served meanwhile. A reading that runs out of
 * time or memory is a refusal of the file, not a crash of the process.
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
  /** Drops what the reader holds of the reading (call it when stopping before the end). */
  close(): void;
}

/**
 * goldenParts in the reader process, one part per question: `bytes` (golden.jsonl as read) are
 * copied there, decoded, and each line parsed and validated there (a line may be megabytes of
 * JSON); the serving thread takes in one part of at most GOLDEN_PART_CANDIDATES candidates per
 * event-loop turn, when it asks for it. A reading that runs out of time (per part) or memory ends
 * with a part at line 0 saying why.
 */
export function readGoldenOffThread(bytes: Uint8Array, limits = SPEC_READ_LIMITS): GoldenReader {
  const reader = readerFor(limits);
  const id = reader.newId();
  // Held until it is sent: the file can be megabytes.
  let unsent: Uint8Array | undefined = bytes;
  let state: 'new' | 'reading' | 'over' = 'new';
  const over = () => {
    if (state === 'reading') reader.release();
    state = 'over';
  };
  return {
    async next() {
      if (state === 'over') return undefined;
      const sending = unsent;
      unsent = undefined;
      if (state === 'new') {
        // The reader stays until this reading is over: it holds the rest of the file.
        reader.hold();
        state = 'reading';
      }
      const answer = await (sending === undefined
        ? reader.ask({ kind: 'next', id })
        : reader.ask({ kind: 'golden', id, bytes: sending }));
      if ('refused' in answer) {
        over();
        return { line: 0, error: answer.refused };
      }
      if (!('part' in answer)) {
        over();
        throw new Error('spec reader answered a golden part with a spec');
      }
      if (answer.part === undefined) over();
      return answer.part;
    },
    close() {
      if (state === 'reading') reader.tell({ kind: 'close', id });
      unsent = undefined;
      over();
    },
  };
}
