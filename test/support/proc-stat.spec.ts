import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { processCpuMs, threadCpuSince, threadMark } from './proc-stat';

const onLinux = process.platform === 'linux' ? it : it.skip;

describe('processCpuMs', () => {
  onLinux(
    "counts a child process's CPU, its threads' included, and is NaN once it is gone",
    async () => {
      // A child that spins ~300 ms in a worker thread, then waits for its stdin to close.
      const child = spawn(
        process.execPath,
        [
          '-e',
          `const { Worker } = require('node:worker_threads');
         new Worker("const end = Date.now() + 300; while (Date.now() < end);", { eval: true })
           .on('exit', () => process.stdout.write('spun\\n'));
         process.stdin.resume();`,
        ],
        { stdio: ['pipe', 'pipe', 'inherit'] },
      );
      await once(child.stdout!, 'data');
      const spent = processCpuMs(child.pid);
      // The worker thread has ended: its CPU stays counted in the process's own figure.
      expect(spent).toBeGreaterThanOrEqual(250);
      child.stdin!.end();
      await once(child, 'exit');
      expect(processCpuMs(child.pid)).toBeNaN();
    },
  );
});

describe('threadCpuSince', () => {
  onLinux(
    "counts as the model threads' only those at the lowest nice above the main thread's",
    async () => {
      // Two threads spin ~200 ms each: a model thread stand-in at nice 10, a helper at nice 11
      // (where the engine puts V8's and libuv's threads, lowerHelperThreads).
      const child = spawn(
        process.execPath,
        [
          '-e',
          `const { Worker } = require('node:worker_threads');
         const spin = (nice) => new Promise((done) =>
           new Worker("require('node:os').setPriority(0, " + nice + "); const end = Date.now() + 200; while (Date.now() < end); require('node:worker_threads').parentPort.postMessage(0); setInterval(() => {}, 1000);", { eval: true })
             .once('message', done));
         process.stdin.once('data', async () => {
           await Promise.all([spin(10), spin(11)]);
           process.stdout.write('spun\\n');
         });
         process.stdin.resume();`,
        ],
        { stdio: ['pipe', 'pipe', 'inherit'] },
      );
      try {
        const mark = threadMark(child.pid);
        child.stdin!.write('go\n');
        await once(child.stdout!, 'data');
        const spent = threadCpuSince(mark, child.pid);
        expect(spent.model).toBeGreaterThanOrEqual(150);
        expect(spent.model).toBeLessThan(320);
        expect(spent.total).toBeGreaterThanOrEqual(spent.model + 150);
      } finally {
        child.kill('SIGKILL');
      }
    },
  );
});
