/**
 * What a scored request leaves behind for the garbage collector, on the real engine: once the
 * caller drops scoreScene's answer, a scavenge (V8's young-generation collection) frees the
 * request, nothing of it is promoted to the old generation to wait for a mark-compact.
 */
import 'reflect-metadata';
import { smallWorkerEngine, WorkerScoringEngine } from '@app/scoring/testing';
import { Logger } from '@nestjs/common';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { goldenFrame } from './golden-check';
import { Scene } from './scene';
import { loadBundle } from './scene-loader';
import { scoreScene } from './scene-scorer';

const EXAMPLE = resolve(__dirname, '../../../../models/feed/v1');

describe('scoreScene and the garbage collector (real engine)', () => {
  let engine: WorkerScoringEngine;
  let scene: Scene;
  let gc: (options?: { type: 'minor' | 'major' }) => void;

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc');
    engine = smallWorkerEngine();
    scene = await loadBundle(EXAMPLE, engine, { golden: false });
  });

  afterAll(() => engine.onApplicationShutdown());

  it('an answer dropped is freed by scavenges: 100 requests of 512 fresh candidates promote almost nothing', async () => {
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
      getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')!.space_used_size;
    for (let i = 0; i < 20; i++) await scoreScene(scene, engine, goldenFrame(request()));
    gc({ type: 'major' });
    const before = oldSpace();
    for (let i = 0; i < 100; i++) {
      const { scores } = await scoreScene(scene, engine, goldenFrame(request()));
      expect(scores).toHaveLength(512);
      // Twice: whatever is still reachable goes through both halves of the young generation and
      // is promoted.
      gc({ type: 'minor' });
      gc({ type: 'minor' });
    }
    // Each request's frame holds ~100 kB of rows: kept alive by a hidden class of its own (an
    // object literal with a getter, until 2026-12-04), 100 of them grew the old generation by
    // ~10 MB; freed young, by ~0.3 MB.
    expect(oldSpace() - before).toBeLessThan(3 * 1024 * 1024);
  });
});
