import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { applyOrtTelemetry, ORT_DISABLE_TELEMETRY } from './ort-telemetry';

const CHILD = join(__dirname, 'ort-telemetry.child.ts');
const ORT_CACHE = '.cache/Microsoft/DeveloperTools/.onnxruntime';

/**
 * Runs the child with its own HOME and no ORT_DISABLE_TELEMETRY inherited; resolves its pid.
 * onnxruntime puts its event store under XDG_CACHE_HOME when that is set (a CI runner may set it)
 * and under HOME/.cache otherwise: the child gets XDG_CACHE_HOME pointed into its HOME, so the
 * store lands where these checks look whatever the runner's environment holds.
 */
function runChild(telemetry: boolean, home: string): Promise<number> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    XDG_CACHE_HOME: join(home, '.cache'),
  };
  delete env[ORT_DISABLE_TELEMETRY];
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      ['-r', '@swc-node/register', CHILD, String(telemetry)],
      { env, timeout: 60_000 },
      (error, _stdout, stderr) => {
        if (error) reject(new Error(`child failed: ${error.message}\n${stderr}`));
        else resolve(child.pid!);
      },
    );
  });
}

describe('onnxruntime telemetry', () => {
  let home: string;

  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'ort-home-'));
  });

  afterEach(() => {
    rmSync(home, { recursive: true, force: true });
  });

  it('is off by default: a model thread leaves no event store and no debug log', async () => {
    const pid = await runChild(false, home);
    expect(existsSync(join(home, ORT_CACHE))).toBe(false);
    expect(existsSync(join('/tmp', `mat-debug-${pid}.log`))).toBe(false);
  }, 90_000);

  it('records its events when SCORING_ORT_TELEMETRY is on (what the check above would see)', async () => {
    const pid = await runChild(true, home);
    // The whole listing, so a runner where the store lands elsewhere says where.
    const left = readdirSync(home, { recursive: true, encoding: 'utf8' });
    expect(left).toContain(join(ORT_CACHE, 'onnxruntime.db'));
    rmSync(join('/tmp', `mat-debug-${pid}.log`), { force: true });
  }, 90_000);

  it('sets the variable only when off, and leaves an operator-set value alone when on', () => {
    const off: NodeJS.ProcessEnv = {};
    applyOrtTelemetry(false, off);
    expect(off[ORT_DISABLE_TELEMETRY]).toBe('1');
    const operator: NodeJS.ProcessEnv = { [ORT_DISABLE_TELEMETRY]: '1' };
    applyOrtTelemetry(true, operator);
    expect(operator[ORT_DISABLE_TELEMETRY]).toBe('1');
    const on: NodeJS.ProcessEnv = {};
    applyOrtTelemetry(true, on);
    expect(on[ORT_DISABLE_TELEMETRY]).toBeUndefined();
  });

  it('refuses to run in a worker thread, whose process.env never reaches onnxruntime', async () => {
    const worker = new Worker(
      `const { parentPort } = require('node:worker_threads');
       require('@swc-node/register');
       try { require(${JSON.stringify(join(__dirname, 'ort-telemetry.ts'))}).applyOrtTelemetry(false); parentPort.postMessage('set'); }
       catch (error) { parentPort.postMessage(error.message); }`,
      { eval: true },
    );
    const answer = await new Promise<string>((resolve) => worker.once('message', resolve));
    await worker.terminate();
    expect(answer).toMatch(/must be set on the main thread/);
  }, 30_000);
});
