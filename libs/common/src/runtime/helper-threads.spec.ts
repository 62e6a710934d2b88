import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lowerHelperThreads } from './helper-threads';

const onLinux = process.platform === 'linux' ? it : it.skip;

interface Seen {
  lowered: number[];
  main: number;
  /** Every other thread's nice value, after each step. */
  others: number[][];
  /** The worker that had lowered itself to 10 (a model thread) before the calls. */
  modelThread: number;
}

/**
 * Runs the function in a child process (it changes the priority of the process it runs in): a
 * worker thread started at the main thread's nice, another that lowered itself to 10 first (as a
 * model thread does), then lowerHelperThreads(0), (11, 10) and (11, 10) again.
 */
function runInChild(): Seen {
  const dir = mkdtempSync(join(tmpdir(), 'helper-threads-'));
  const script = join(dir, 'child.js');
  writeFileSync(
    script,
    `
    const { Worker } = require('node:worker_threads');
    const { readdirSync, readFileSync } = require('node:fs');
    const { lowerHelperThreads } = require(${JSON.stringify(join(__dirname, 'helper-threads.ts'))});
    const nice = (tid) => {
      const stat = readFileSync('/proc/self/task/' + tid + '/stat', 'latin1');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    };
    const others = () => readdirSync('/proc/self/task').filter((t) => Number(t) !== process.pid).map(nice);
    const started = (code) => new Promise((resolve) => {
      const w = new Worker(code + "; require('node:worker_threads').parentPort.postMessage(require('node:fs').readFileSync('/proc/thread-self/stat', 'latin1').split(' ')[0]); setInterval(() => {}, 1000);", { eval: true });
      w.once('message', (tid) => resolve({ w, tid }));
    });
    (async () => {
      await started('');
      const model = await started("require('node:os').setPriority(0, 10)");
      const lowered = [lowerHelperThreads(0)];
      const before = others();
      lowered.push(lowerHelperThreads(11, 10));
      const after = others();
      lowered.push(lowerHelperThreads(11, 10));
      process.stdout.write(JSON.stringify({
        lowered, main: nice(process.pid), others: [before, after], modelThread: nice(model.tid),
      }));
      process.exit(0);
    })();
    `,
  );
  try {
    const out = execFileSync(process.execPath, ['-r', '@swc-node/register', script], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    return JSON.parse(out) as Seen;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('lowerHelperThreads', () => {
  onLinux(
    'lowers the threads above the model threads, but not the event loop nor the model threads, and does nothing at 0',
    () => {
      const seen = runInChild();
      // nice 0 lowers nothing; the threads other than the model stand-in started at the main's 0.
      expect(seen.lowered[0]).toBe(0);
      expect(seen.others[0].filter((n) => n === 0).length).toBeGreaterThanOrEqual(2);
      // (11, 10): every other thread (V8's, libuv's, the plain worker) at 11, the model one at 10.
      expect(seen.lowered[1]).toBeGreaterThanOrEqual(2);
      expect(seen.others[1].every((n) => n === 11 || n === 10)).toBe(true);
      expect(seen.others[1].filter((n) => n === 10)).toHaveLength(1);
      expect(seen.modelThread).toBe(10);
      expect(seen.main).toBe(0);
      // Again: nothing left to lower.
      expect(seen.lowered[2]).toBe(0);
    },
  );

  it('is a no-op where the task folder cannot be read (off Linux)', () => {
    expect(lowerHelperThreads(10, 10, '/nonexistent/task')).toBe(0);
  });
});
