/**
 * The measurement of scene-scorer.gc.spec.ts, run in a process of its own (`node --expose-gc -r
 * @swc-node/register`): 512 fresh candidates scored with the real engine, each answer dropped and
 * followed by two scavenges; prints as its last line JSON `{ rows, perRequest, withMarkCompact }`:
 * rows scored in each hundred, the old generation's growth in bytes per request over each of three
 * hundreds after a warm-up that ran no mark-compact of V8's own, and how many did (not counted).
 */
import 'reflect-metadata';
import { tuneGarbageCollector } from '@app/common';
import { smallWorkerEngine } from '@app/scoring/testing';
import { Logger } from '@nestjs/common';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { GCProfiler, getHeapSpaceStatistics } from 'node:v8';
import { goldenFrame } from './golden-check';
import { loadBundle } from './scene-loader';
import { scoreScene } from './scene-scorer';

const EXAMPLE = resolve(__dirname, '../../../../models/feed/v1');
const gc = (globalThis as { gc?: (options?: { type: 'minor' | 'major' }) => void }).gc;

async function main(): Promise<void> {
  if (!gc) throw new Error('run with --expose-gc');
  // As the apps' main.ts do: what is measured is a serving process. Without it, V8 13.6 (Node.js
  // 24) learns in this very loop that the request's allocation sites survive and allocates them
  // straight in the old generation, which then grows ~105 kB a request by allocation, not by
  // anything the scavenges promote (Node.js 20 did not, here).
  tuneGarbageCollector();
  Logger.overrideLogger(['error']);
  const engine = smallWorkerEngine();
  const scene = await loadBundle(EXAMPLE, engine, { golden: false });
  const base = JSON.parse((await readFile(join(EXAMPLE, 'golden.jsonl'), 'utf8')).split('\n')[0]);
  const request = () => ({
    user: base.user,
    context: base.context,
    candidates: Array.from({ length: 512 }, (_, c) => ({
      id: `c${c}`,
      features: { ...base.candidates[c % base.candidates.length].features, price: c / 10 },
    })),
  });
  const oldSpace = () =>
    getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')!.space_used_size;
  // Scores `n` requests, each answer dropped, with two scavenges after each: whatever is still
  // reachable then goes through both halves of the young generation and is promoted.
  const score = async (n: number) => {
    let rows = 0;
    for (let i = 0; i < n; i++) {
      rows += (await scoreScene(scene, engine, goldenFrame(request()))).scores.length;
      gc({ type: 'minor' });
      gc({ type: 'minor' });
    }
    return rows;
  };
  // Warm: the code is compiled and what the engine keeps (pooled buffers) is in place.
  await score(50);
  // Each hundred starts from a full collection, which also ends any concurrent marking under way
  // (objects promoted while one runs stay counted as live until the next). A hundred during which
  // V8 ran a mark-compact of its own is not counted (the old generation shrinks by what that
  // freed), and another is scored instead, up to eight in all.
  const rows: number[] = [];
  const perRequest: number[] = [];
  let withMarkCompact = 0;
  for (let hundred = 0; perRequest.length < 3 && hundred < 8; hundred++) {
    gc({ type: 'major' });
    const profiler = new GCProfiler(); // kept outside the JS heap until stop()
    profiler.start();
    const before = oldSpace();
    rows.push(await score(100));
    const grown = oldSpace() - before;
    const collections = profiler.stop()?.statistics ?? [];
    if (collections.some(({ gcType }) => gcType === 'MarkSweepCompact')) withMarkCompact++;
    else perRequest.push(grown / 100);
  }
  await engine.onApplicationShutdown();
  process.stdout.write(`\n${JSON.stringify({ rows, perRequest, withMarkCompact })}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
