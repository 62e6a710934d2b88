import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { processCpuMs } from './proc-stat';

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
