import { Worker } from 'node:worker_threads';
import { extname, join } from 'node:path';
import { PIPELINE_FILE, SpecTextReading } from './spec-text';

const WORKER_FILE = join(__dirname, `spec-worker${extname(__filename)}`);
const WORKER_EXEC_ARGV = extname(__filename) === '.ts' ? ['--require', '@swc-node/register'] : [];

/** How long a pipeline.yaml may take to read, and the memory its reading may use. */
export const SPEC_READ_LIMITS = { timeoutMs: 30_000, maxOldGenerationSizeMb: 256 };

/**
 * readSpecText in a worker thread of its own, so a large or hostile pipeline.yaml (the `yaml`
 * package parses 1 MB in seconds) never stalls the requests served meanwhile. A reading that runs
 * out of time or memory is a refusal of the file, not a crash of the process.
 */
export function readSpecOffThread(
  text: string,
  limits = SPEC_READ_LIMITS,
): Promise<SpecTextReading> {
  return new Promise((resolve) => {
    const refuse = (message: string) =>
      resolve({ ok: false, errors: [{ path: PIPELINE_FILE, message }] });
    const worker = new Worker(WORKER_FILE, {
      workerData: { text },
      execArgv: WORKER_EXEC_ARGV,
      resourceLimits: { maxOldGenerationSizeMb: limits.maxOldGenerationSizeMb },
    });
    const timer = setTimeout(() => {
      void worker.terminate();
      refuse(`not read within ${limits.timeoutMs} ms; abandoned`);
    }, limits.timeoutMs);
    worker.once('message', (reading: SpecTextReading) => {
      clearTimeout(timer);
      resolve(reading);
    });
    worker.once('error', (error: Error) => {
      clearTimeout(timer);
      refuse(`could not be read: ${error.message}`);
    });
    worker.once('exit', () => {
      clearTimeout(timer);
      refuse('could not be read: its reader stopped without an answer');
    });
  });
}
