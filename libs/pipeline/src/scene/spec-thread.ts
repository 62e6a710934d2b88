import { Worker } from 'node:worker_threads';
import { extname, join } from 'node:path';
import { PIPELINE_FILE, SpecTextReading } from './spec-text';

const WORKER_FILE = join(__dirname, `spec-worker${extname(__filename)}`);
const WORKER_EXEC_ARGV = extname(__filename) === '.ts' ? ['--require', '@swc-node/register'] : [];

/** How long a pipeline.yaml may take to read, and the memory its reader may use. */
export const SPEC_READ_LIMITS = { timeoutMs: 30_000, maxOldGenerationSizeMb: 256 };

type Limits = typeof SPEC_READ_LIMITS;

/**
 * One worker thread that reads pipeline.yaml texts (readSpecText), one at a time. It lives on
 * between bundles: starting it loads the YAML parser and the schema (~0.4 s of CPU), which a live
 * load must not pay beside traffic. A reading that runs out of time is abandoned with its thread,
 * and one that runs out of memory takes only its thread; the next reading starts a new one.
 */
class SpecReaderThread {
  private worker: Worker | undefined;
  private nextId = 0;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly limits: Limits) {}

  read(text: string): Promise<SpecTextReading> {
    const reading = this.queue.then(() => this.readNow(text));
    this.queue = reading;
    return reading;
  }

  private readNow(text: string): Promise<SpecTextReading> {
    const worker = (this.worker ??= this.start());
    const id = ++this.nextId;
    return new Promise((resolve) => {
      const done = (reading: SpecTextReading) => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        resolve(reading);
      };
      const refuse = (message: string) => {
        if (this.worker === worker) this.worker = undefined;
        done({ ok: false, errors: [{ path: PIPELINE_FILE, message }] });
      };
      const onMessage = (message: { id: number; reading: SpecTextReading }) => {
        if (message.id === id) done(message.reading);
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
      worker.postMessage({ id, text });
    });
  }

  private start(): Worker {
    const worker = new Worker(WORKER_FILE, {
      execArgv: WORKER_EXEC_ARGV,
      resourceLimits: { maxOldGenerationSizeMb: this.limits.maxOldGenerationSizeMb },
    });
    // An idle reader never keeps the process alive; whenever it dies, the next reading starts anew.
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

/**
 * readSpecText in a worker thread, so a large or hostile pipeline.yaml (the `yaml` package parses
 * 1 MB in seconds) never stalls the requests served meanwhile. A reading that runs out of time or
 * memory is a refusal of the file, not a crash of the process.
 */
export function readSpecOffThread(
  text: string,
  limits = SPEC_READ_LIMITS,
): Promise<SpecTextReading> {
  let reader = shared.get(limits);
  if (!reader) shared.set(limits, (reader = new SpecReaderThread(limits)));
  return reader.read(text);
}
