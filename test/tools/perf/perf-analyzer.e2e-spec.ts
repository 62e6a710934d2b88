/**
 * The perf analyzer as a user runs it: a separate process (npm run perf's command) driving the
 * real ranker app over HTTP for a couple of one-second steps; checks its table, CSV and SVG, its
 * error accounting by code, and its exit codes.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { RankerClient } from '../../e2e/ranker-client';

const repoRoot = resolve(__dirname, '..', '..', '..');

function perf(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['-r', '@swc-node/register', 'test/tools/perf/perf.ts', ...args],
      { cwd: repoRoot, timeout: 60_000 },
      (error, stdout, stderr) =>
        done({ code: error === null ? 0 : Number(error.code ?? -1), stdout, stderr }),
    );
  });
}

describe('npm run perf against a real ranker', () => {
  let ranker: RankerClient;
  let dir: string;

  beforeAll(async () => {
    ranker = await RankerClient.start();
    dir = mkdtempSync(join(tmpdir(), 'perf-e2e-'));
  });
  afterAll(async () => {
    await ranker.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('measures each concurrency step and writes the table, CSV and chart', async () => {
    const csv = join(dir, 'steps.csv');
    const svg = join(dir, 'steps.svg');
    const run = await perf([
      `--url=${ranker.baseUrl}`,
      '--candidates=100',
      '--concurrency=1,2',
      '--duration=1',
      '--warmup=0.5',
      `--csv=${csv}`,
      `--svg=${svg}`,
    ]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n');
    const header = lines.findIndex((l) => l.trim().startsWith('concurrency'));
    expect(header).toBeGreaterThan(-1);
    const rows = lines.slice(header + 1, header + 3).map((l) => l.trim().split(/\s{2,}/));
    expect(rows.map((r) => r[0])).toEqual(['1', '2']);
    for (const row of rows) {
      expect(Number(row[1])).toBeGreaterThan(0); // requests/s
      expect(Number(row[2])).toBeCloseTo(Number(row[1]) * 100, -2); // candidates/s
      expect(Number(row[3])).toBeLessThanOrEqual(Number(row[5])); // p50 <= p99
      expect(row[7]).toBe('-'); // no errors
    }

    const csvLines = readFileSync(csv, 'utf8').trim().split('\n');
    expect(csvLines).toHaveLength(3);
    expect(csvLines[0]).toMatch(/^mode,level,seconds,requests,ok,failed,requests_per_s/);
    expect(csvLines[1]).toMatch(/^concurrency,1,/);
    expect(csvLines[2]).toMatch(/^concurrency,2,/);

    const chart = readFileSync(svg, 'utf8');
    expect(chart).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(chart.match(/<circle class="point"/g)).toHaveLength(2);
    expect(chart).toContain('>c=1</text>');
    expect(chart).toContain('>c=2</text>');
  }, 60_000);

  it('counts failures by the code of the error body in rate mode, and exits 1 when nothing succeeded', async () => {
    const run = await perf([
      '--url',
      ranker.baseUrl,
      '--scene',
      'no-such-scene',
      '--rate',
      '10',
      '--duration',
      '1',
      '--warmup',
      '0',
      '--random-ids',
    ]);
    expect(run.code).toBe(1);
    const row = run.stdout.split('\n').find((l) => l.trim().startsWith('10 '));
    expect(row).toMatch(/404 SCENE_NOT_FOUND x10$/);
  }, 60_000);

  it('rejects a bad flag with a clear message and exit 2, sending nothing', async () => {
    const run = await perf(['--url', ranker.baseUrl, '--concurency', '2']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('perf: unknown option --concurency');
    expect(run.stderr).toContain('usage: npm run perf');
    expect(run.stdout).toBe('');
  }, 30_000);
});
