/**
 * npm run bundle:golden -- <bundle dir> [features file]
 * Writes <bundle dir>/golden.jsonl: a few requests carrying all their features (from the
 * feature file, default models/demo/features.jsonl) with the fused scores this bundle gives
 * them now. Loading the bundle later fails if its scores drift beyond golden.tolerance.
 */
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { FeatureRow } from '@app/features';
import { readFeatureFile } from '@app/features/testing';
import { GOLDEN_FILE, goldenFrame, loadBundle, scoreScene } from '@app/pipeline/testing';
import { ScoringConfig } from '@app/scoring';
import { WorkerScoringEngine } from '@app/scoring/testing';
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

const CASES: { user: string; items: number; context: FeatureRow }[] = [
  {
    user: 'u1',
    items: 12,
    context: { hour: 20, weekday: 5, device: 'ios', os: 'ios17', network: 'wifi', page: 'home' },
  },
  { user: 'u2', items: 12, context: { hour: 8, device: 'android', page: 'search' } },
  { user: 'u3', items: 12, context: {} },
];

async function main(): Promise<void> {
  Logger.overrideLogger(['error']);
  const dir = resolve(process.argv[2] ?? 'models/feed/v1');
  const records = await readFeatureFile(resolve(process.argv[3] ?? 'models/demo/features.jsonl'));
  const users = new Map(records.filter((r) => r.entity === 'user').map((r) => [r.id, r.fields]));
  const items = records.filter((r) => r.entity === 'item');
  const engine = new WorkerScoringEngine(
    Object.assign(new ScoringConfig(), { SCORING_DEFAULT_INSTANCES: 1 }),
  );
  const scene = await loadBundle(dir, engine, { golden: false });
  const lines: string[] = [];
  for (const [n, spec] of CASES.entries()) {
    const candidates = items
      .slice(n * spec.items, (n + 1) * spec.items)
      .map((r) => ({ id: r.id, features: r.fields }));
    const request = {
      user: { id: spec.user, features: users.get(spec.user) },
      context: spec.context,
      candidates,
    };
    const { scores } = await scoreScene(scene, engine, goldenFrame(request));
    lines.push(JSON.stringify({ ...request, expected: Array.from(scores) }));
  }
  await writeFile(join(dir, GOLDEN_FILE), `${lines.join('\n')}\n`);
  console.log(`wrote ${lines.length} golden requests to ${join(dir, GOLDEN_FILE)}`);
  await engine.onApplicationShutdown();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
