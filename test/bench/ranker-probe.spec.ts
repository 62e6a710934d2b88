/**
 * The probe bench:rank preloads into the ranker: it must see the main thread's busy time and its
 * event-loop stalls from inside the process, answer over IPC, and never keep a process alive.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { constants } from 'node:perf_hooks';
import { addGcPause, GcPauses, ProbeReading, ToProbe } from './ranker-probe';

const PROBE = join(__dirname, 'ranker-probe.ts');

function start(script: string, nodeArgs: string[] = []): ChildProcess {
  return spawn(
    process.execPath,
    [...nodeArgs, '-r', '@swc-node/register', '-r', PROBE, '-e', script],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
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

/** Sends the probe `probe` with `id` and resolves with its reading. */
function ask(child: ChildProcess, probe: ToProbe['probe'], id: number): Promise<ProbeReading> {
  child.send({ probe, id } satisfies ToProbe);
  return next<ProbeReading>(child, (m) => (m as ProbeReading)?.id === id);
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
      await ask(child, 'mark', 1);
      child.send('spin');
      await next(child, (m) => m === 'spun');
      const reading = await ask(child, 'read', 2);
      expect(reading.probe).toBe('reading');
      expect(reading.activeMs).toBeGreaterThanOrEqual(140);
      expect(reading.loopMaxMs).toBeGreaterThanOrEqual(140);
      expect(reading.utilization).toBeGreaterThan(0);
      // The spin is CPU of the main thread, and so of the process (the thread's in 10 ms ticks).
      expect(reading.processCpuMs).toBeGreaterThanOrEqual(150);
      if (process.platform === 'linux') expect(reading.mainThreadCpuMs).toBeGreaterThanOrEqual(120);
      else expect(reading.mainThreadCpuMs).toBeNull();
      // No thread runs at another nice than the main thread: no model threads to tell apart.
      expect(reading.modelThreadsCpuMs).toBeNull();

      // A new mark starts a new window: the stall is not counted again.
      await ask(child, 'mark', 3);
      const after = await ask(child, 'read', 4);
      expect(after.activeMs).toBeLessThan(140);
    } finally {
      child.kill('SIGKILL');
    }
  }, 30_000);

  it('counts the CPU of threads at another nice (the model threads) apart from the main thread', async () => {
    if (process.platform !== 'linux') return;
    // A stand-in for a model thread: lowers its own priority as model-worker.ts does, then spins
    // until it has used 200 ms of CPU of its own; the main thread idles meanwhile.
    const child = start(`
      const { Worker } = require('node:worker_threads');
      const keepAlive = setInterval(() => {}, 1000);
      process.on('message', (m) => {
        if (m === 'spin') {
          const w = new Worker(\`
            require('node:os').setPriority(0, 10);
            const fs = require('node:fs');
            // This thread's utime + stime in ticks (fields 14 and 15 of its /proc stat).
            const ticks = () => {
              const stat = fs.readFileSync('/proc/thread-self/stat', 'latin1');
              const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
              return Number(f[11]) + Number(f[12]);
            };
            const from = ticks();
            let x = 0;
            while (ticks() - from < 20) for (let i = 0; i < 1e5; i++) x++;
            require('node:worker_threads').parentPort.postMessage(x);
            // Alive until the read: the probe counts the threads it finds then.
            setInterval(() => {}, 1000);
          \`, { eval: true });
          w.once('message', () => setTimeout(() => process.send('spun'), 50));
        }
        if (m === 'quit') { clearInterval(keepAlive); process.removeAllListeners('message'); }
      });`);
    try {
      await ask(child, 'mark', 1);
      child.send('spin');
      await next(child, (m) => m === 'spun');
      const reading = await ask(child, 'read', 2);
      // The worker's spin is the model threads' CPU (in 10 ms ticks), not the main thread's.
      expect(reading.modelThreadsCpuMs).toBeGreaterThanOrEqual(200);
      expect(reading.modelThreadsCpuMs).toBeLessThanOrEqual(reading.processCpuMs + 10);
      expect(reading.mainThreadCpuMs).toBeLessThan(200);
    } finally {
      child.kill('SIGKILL');
    }
  }, 30_000);

  it("counts the main thread's scavenges and mark-compacts since the mark, apart", async () => {
    // Two scavenges and one full collection, forced, between the mark and the read.
    const child = start(
      `
      const keepAlive = setInterval(() => {}, 1000);
      process.on('message', (m) => {
        if (m === 'collect') {
          gc({ type: 'minor' });
          gc({ type: 'minor' });
          gc();
          process.send('collected');
        }
        if (m === 'quit') { clearInterval(keepAlive); process.removeAllListeners('message'); }
      });`,
      ['--expose-gc'],
    );
    try {
      const marked = await ask(child, 'mark', 1);
      expect(marked.scavenges).toBe(0);
      child.send('collect');
      await next(child, (m) => m === 'collected');
      const reading = await ask(child, 'read', 2);
      // V8 may add a scavenge of its own before the full collection; never fewer than forced.
      expect(reading.scavenges).toBeGreaterThanOrEqual(2);
      expect(reading.markCompacts).toBe(1);
      expect(reading.gcScavengeMs).toBeGreaterThan(0);
      expect(reading.gcMarkCompactMs).toBeGreaterThan(0);

      // A new mark starts a new window.
      await ask(child, 'mark', 3);
      const after = await ask(child, 'read', 4);
      expect(after.markCompacts).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  }, 30_000);

  it('files incremental-marking steps and weak-callback passes under the mark-compact', () => {
    const pauses: GcPauses = { gcScavengeMs: 0, gcMarkCompactMs: 0, scavenges: 0, markCompacts: 0 };
    addGcPause(pauses, constants.NODE_PERFORMANCE_GC_MINOR, 2);
    addGcPause(pauses, constants.NODE_PERFORMANCE_GC_INCREMENTAL, 1.5);
    addGcPause(pauses, constants.NODE_PERFORMANCE_GC_WEAKCB, 0.5);
    addGcPause(pauses, constants.NODE_PERFORMANCE_GC_MAJOR, 4);
    expect(pauses).toEqual({ gcScavengeMs: 2, gcMarkCompactMs: 6, scavenges: 1, markCompacts: 1 });
  });

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
