/**
 * The real Kafka worker as a child process (apps/batch-scorer/src/main.ts under swc), for the specs
 * that kill, stop and add workers, and for bench:batch. Its readiness and metrics come from its own
 * /health/ready and /metrics on a free loopback port.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './free-port';
import { fetchMetricSum } from './metrics-text';
import { scriptNodeFlags } from './node-flags';

const repoRoot = resolve(__dirname, '..', '..');
const LOG_KEPT = 200_000;
/** The node options `npm run start:batch-scorer` (and k8s/batch-scorer.yaml) run the worker with. */
const PRODUCTION_NODE_FLAGS = scriptNodeFlags('start:batch-scorer');

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class BatchScorerProcess {
  private log = '';
  readonly exited: Promise<Exit>;

  private constructor(
    private readonly child: ChildProcess,
    readonly metricsUrl: string,
    readonly name: string,
  ) {
    const keep = (chunk: Buffer) => (this.log = (this.log + chunk.toString()).slice(-LOG_KEPT));
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.exited = new Promise((done) =>
      child.once('exit', (code, signal) => done({ code, signal })),
    );
  }

  /**
   * Starts a worker with `env` on top of this process's environment, and with the node options of
   * production (then `nodeArgs`); resolves once it is ready (bundles loaded, consuming its topic),
   * unless `ready` is false.
   */
  static async start(
    env: Record<string, string>,
    { name = 'worker', ready = true, nodeArgs = [] as string[], withinMs = 90_000 } = {},
  ): Promise<BatchScorerProcess> {
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [
        ...PRODUCTION_NODE_FLAGS,
        ...nodeArgs,
        '-r',
        '@swc-node/register',
        'apps/batch-scorer/src/main.ts',
      ],
      {
        cwd: repoRoot,
        env: {
          ...process.env,
          ...env,
          BATCH_METRICS_PORT: String(port),
          BATCH_METRICS_HOST: '127.0.0.1',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const worker = new BatchScorerProcess(child, `http://127.0.0.1:${port}`, name);
    if (ready) await worker.ready(withinMs);
    return worker;
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  async ready(withinMs = 90_000): Promise<void> {
    for (const until = Date.now() + withinMs; ; await sleep(200)) {
      if (!this.running) throw new Error(`${this.name} exited early:\n${this.log}`);
      const ok = await fetch(`${this.metricsUrl}/health/ready`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) return;
      if (Date.now() > until) {
        this.child.kill('SIGKILL');
        throw new Error(`${this.name} not ready within ${withinMs} ms:\n${this.log}`);
      }
    }
  }

  /** Sum of every series of `name` whose label text includes `labels` (0 if none). */
  metric(name: string, labels = ''): Promise<number> {
    return fetchMetricSum(`${this.metricsUrl}/metrics`, name, labels);
  }

  logText(): string {
    return this.log;
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** SIGTERM, then SIGKILL if it has not exited within `withinMs`. */
  async stop(withinMs = 30_000): Promise<Exit> {
    if (!this.running) return this.exited;
    this.child.kill('SIGTERM');
    // Unref'd: once it has exited, the spare timer must not keep the test process alive.
    const timeout = sleep(withinMs, undefined, { ref: false }).then(() => undefined);
    const exit = await Promise.race([this.exited, timeout]);
    if (exit) return exit;
    this.child.kill('SIGKILL');
    return this.exited;
  }
}
