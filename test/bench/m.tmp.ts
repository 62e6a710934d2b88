import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { join, resolve } from 'node:path';
import { LoadGenerator } from '../tools/perf/load-generator';
import { buildBodies, idsFromFeatureFile } from '../tools/perf/request-bodies';
import { seedFeatures } from './feature-seed';
import { RankerProcess } from './ranker-process';
const repoRoot = resolve(__dirname, '..', '..');
const FEATURES = join(repoRoot, 'models/demo/features.jsonl');
async function main() {
  Logger.overrideLogger(['error']);
  const prefix = `m:${process.pid}:`;
  await seedFeatures(FEATURES, prefix, 'redis://127.0.0.1:6379');
  const r = await RankerProcess.start({ FEATURE_STORE: 'redis', REDIS_URL: 'redis://127.0.0.1:6379', FEATURES_REDIS_KEY_PREFIX: prefix, ITEM_CACHE_TTL_MS: '3600000', ...JSON.parse(process.env.M_ENV ?? '{}') });
  const pools = await idsFromFeatureFile(FEATURES);
  const kind = process.env.M_KIND ?? 'small';
  const load = new LoadGenerator({ url: `${r.baseUrl}/v1/scenes/feed/rank`, bodies: buildBodies(pools, kind === 'small' ? { candidates: 100, count: 256, seed: 2 } : { candidates: 3000, count: 32, seed: 1 }) });
  await load.run({ mode: 'concurrency', level: kind === 'small' ? 64 : 4, seconds: 3 });
  const res = await load.run({ mode: 'concurrency', level: kind === 'small' ? 64 : 4, seconds: 5 });
  console.log('ok', res.ok, 'rows/s', (res.ok * (kind === 'small' ? 100 : 3000)) / res.elapsedS);
  await r.stop(); load.close(); process.exit(0);
}
void main();
