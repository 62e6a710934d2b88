/**
 * The real ranker as a child process (apps/ranker/src/main.ts under swc, as
 * test/e2e/shutdown.e2e-spec.ts starts it), with ranker-probe.ts preloaded so the benchmark can
 * read the ranker's own event-loop figures over IPC. The load comes from another process.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ProbeReading, ToProbe } from './ranker-probe';
import { freePort } from '../support/free-port';
import { scriptNodeFlags } from '../support/node-flags';

const repoRoot = resolve(__dirname, '..', '..');
const LOG_KEPT = 20_000;

export class RankerProcess {
  private log = '';
  private nextId = 0;

  private constructor(
    private readonly child: ChildProcess,
    readonly baseUrl: string,
  ) {
    const keep = (chunk: Buffer) => (this.log = (this.log + chunk.toString()).slice(-LOG_KEPT));
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
  }

  /**
   * Starts the ranker with `env` on top of this process's environment; resolves once ready.
   * `entry` is its sources by default; `dist/apps/ranker/src/main.js` (after `nest build ranker`)
   * runs the built app, as `npm start` does, whose model workers then start without swc.
   */
  static async start(
    env: Record<string, string>,
    readyWithinMs = 90_000,
    entry = 'apps/ranker/src/main.ts',
  ): Promise<RankerProcess> {
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [
        // The node options `npm start` runs the ranker with, then, e.g.
        // BENCH_RANKER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the ranker.
        ...scriptNodeFlags('start'),
        ...(process.env.BENCH_RANKER_NODE_ARGS ?? '').split(' ').filter(Boolean),
        '-r',
        '@swc-node/register',
        '-r',
        join(__dirname, 'ranker-probe.ts'),
        entry,
      ],
      {
        cwd: repoRoot,
        env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
        stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      },
    );
    const ranker = new RankerProcess(child, `http://127.0.0.1:${port}`);
    for (const until = Date.now() + readyWithinMs; ; await sleep(250)) {
      if (child.exitCode !== null) throw new Error(`ranker exited early:\n${ranker.logTail()}`);
      const ready = await fetch(`${ranker.baseUrl}/health/ready`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ready) return ranker;
      if (Date.now() > until) {
        await ranker.stop();
        throw new Error(`ranker not ready within ${readyWithinMs} ms:\n${ranker.logTail()}`);
      }
    }
  }

  /** `mark` restarts the probe's window; `read` returns the figures since the mark. */
  probe(kind: ToProbe['probe']): Promise<ProbeReading> {
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.child.off('message', onMessage);
        reject(new Error(`ranker probe did not answer "${kind}" within 5 s`));
      }, 5000);
      const onMessage = (message: ProbeReading) => {
        if (message?.probe !== 'reading' || message.id !== id) return;
        clearTimeout(timer);
        this.child.off('message', onMessage);
        resolve(message);
      };
      this.child.on('message', onMessage);
      this.child.send({ probe: kind, id } satisfies ToProbe);
    });
  }

  logTail(): string {
    return this.log;
  }

  /** SIGTERM, then SIGKILL if it has not exited within 15 s. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((done) => this.child.once('exit', done));
    this.child.kill('SIGTERM');
    const timeout = sleep(15_000).then(() => 'timeout');
    if ((await Promise.race([exited, timeout])) === 'timeout') this.child.kill('SIGKILL');
  }
}
