/**
 * The probe bench:rank preloads into the ranker: it must see the main thread's busy time and its
 * event-loop stalls from inside the process, answer over IPC, and never keep a process alive.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import type { ProbeReading } from './ranker-probe';

const PROBE = join(__dirname, 'ranker-probe.ts');

function start(script: string): ChildProcess {
  return spawn(process.execPath, ['-r', '@swc-node/register', '-r', PROBE, '-e', script], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

function next<T>(child: ChildProcess, accept: (m: unknown) => boolean): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (m: unknown) => {
      if (!accept(m)) return;
      child.off('message', onMessage);
      resolve(m as T);
    };
    child.on('message', onMessage);
  });
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((done) => child.once('exit', (code) => done(code)));

describe('ranker probe (preloaded, read over IPC)', () => {
  it('reports the busy time and the event-loop stall of work done since the mark', async () => {
    // A stand-in for the ranker: blocks its event loop for 150 ms when told to.
    const child = start(`
      const keepAlive = setInterval(() => {}, 1000);
      process.on('message', (m) => {
        // 150 ms of wall time and of CPU, whatever else the machine runs meanwhile.
        const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
        if (m === 'spin') { const t = Date.now(), c = cpu(); while (Date.now() - t < 150 || cpu() - c < 150); process.send('spun'); }
        if (m === 'quit') { clearInterval(keepAlive); process.removeAllListeners('message'); }
      });`);
    try {
      child.send({ probe: 'mark', id: 1 });
      await next(child, (m) => (m as ProbeReading)?.id === 1);
      child.send('spin');
      await next(child, (m) => m === 'spun');
      child.send({ probe: 'read', id: 2 });
      const reading = await next<ProbeReading>(child, (m) => (m as ProbeReading)?.id === 2);
      expect(reading.probe).toBe('reading');
      expect(reading.activeMs).toBeGreaterThanOrEqual(140);
      expect(reading.loopMaxMs).toBeGreaterThanOrEqual(140);
      expect(reading.utilization).toBeGreaterThan(0);
      // The spin is CPU of the main thread, and so of the process (the thread's in 10 ms ticks).
      expect(reading.processCpuMs).toBeGreaterThanOrEqual(150);
      if (process.platform === 'linux') expect(reading.mainThreadCpuMs).toBeGreaterThanOrEqual(120);
      else expect(reading.mainThreadCpuMs).toBeNaN();

      // A new mark starts a new window: the stall is not counted again.
      child.send({ probe: 'mark', id: 3 });
      await next(child, (m) => (m as ProbeReading)?.id === 3);
      child.send({ probe: 'read', id: 4 });
      const after = await next<ProbeReading>(child, (m) => (m as ProbeReading)?.id === 4);
      expect(after.activeMs).toBeLessThan(140);
    } finally {
      child.kill('SIGKILL');
    }
  }, 30_000);

  it('does not keep a process alive, with or without an IPC channel', async () => {
    const withIpc = start('setTimeout(() => {}, 50)');
    expect(await exited(withIpc)).toBe(0);
    const plain = spawn(
      process.execPath,
      ['-r', '@swc-node/register', '-r', PROBE, '-e', 'setTimeout(() => {}, 50)'],
      { stdio: 'inherit' },
    );
    expect(await exited(plain)).toBe(0);
  }, 30_000);
});
