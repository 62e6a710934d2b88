/**
 * npm run bench:features — feature fetch of 3,000 items per request from the local Redis
 * (127.0.0.1:6379) through RedisFeatureStore, against raw onnxruntime-node inference of the same
 * 3,000 rows on the example CTR model in the same process run (one session, best of 1..cores
 * intra-op threads). Cold: the item cache cleared before every fetch (one GET + one MGET of 3,000
 * JSON blobs, parsed). Warm: every item in the cache (one GET for the user). If a Redis Cluster
 * answers on 127.0.0.1:7000-7002 it is measured too, as extra rows. Keys go under a prefix of
 * their own and are deleted at the end. Prints a table, then one JSON line.
 *
 * Env: BENCH_ITERATIONS (200), BENCH_ITEMS (3000), BENCH_CLUSTER_ITERATIONS (50),
 *      BENCH_REDIS_URL (redis://127.0.0.1:6379), BENCH_CLUSTER_NODES (127.0.0.1:7000,...:7002; '' skips)
 */
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { FeatureRow, FeaturesConfig, FeaturesMetrics } from '@app/features';
import {
  connectRedis,
  ItemCache,
  RedisClient,
  RedisFeatureStore,
  RedisFeatureWriter,
  RedisKeys,
} from '@app/features/testing';
import { randomUUID } from 'node:crypto';
import { redisAnswers } from '../support/redis-ping';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Tensor } from 'onnxruntime-node';
import { Registry } from 'prom-client';
import { ctrFeeds, percentile, rawSession } from './bench-util';

const MODEL = join(__dirname, '../../models/feed/v1/ctr.onnx');
const ITEMS = Number(process.env.BENCH_ITEMS ?? 3000);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 200);
const CLUSTER_ITERATIONS = Number(process.env.BENCH_CLUSTER_ITERATIONS ?? 50);
const CLUSTER_SLOT_BUCKETS = Number(process.env.BENCH_CLUSTER_SLOT_BUCKETS ?? 256);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const CLUSTER_NODES =
  process.env.BENCH_CLUSTER_NODES ?? '127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002';
const CORES = availableParallelism();
const logger = new Logger('bench:features');

/** Rows shaped like the demo items (8 features, ~150-byte blobs). */
function itemRow(i: number): FeatureRow {
  return {
    category: `cat${i % 40}`,
    brand: `b${(i * 7) % 200}`,
    author: `a${(i * 13) % 1000}`,
    price: Math.round(((i * 37) % 20000) + 99) / 100,
    ctr_7d: Math.round(((i * 11) % 1500) + 10) / 10000,
    rating: Math.round(10 + ((i * 3) % 40)) / 10,
    age_days: (i * 17) % 400,
    tags: `t${i % 97}|t${(i * 5) % 97}|t${(i * 9) % 97}`,
  };
}

interface FetchRun {
  ms: number[];
  roundTrips: number;
  hitRatio: number;
  degraded: number;
}

async function measure(
  store: RedisFeatureStore,
  itemIds: string[],
  iterations: number,
  cold: boolean,
): Promise<FetchRun> {
  const ms: number[] = [];
  let roundTrips = 0;
  let hits = 0;
  let misses = 0;
  let degraded = 0;
  if (!cold) await store.fetch('u1', itemIds);
  for (let i = 0; i < iterations; i++) {
    if (cold) store.cache.clear();
    const t0 = performance.now();
    const fetched = await store.fetch('u1', itemIds);
    ms.push(performance.now() - t0);
    roundTrips += fetched.stats.roundTrips;
    hits += fetched.stats.cacheHits;
    misses += fetched.stats.cacheMisses;
    if (fetched.degraded) degraded++;
  }
  ms.sort((a, b) => a - b);
  return { ms, roundTrips: roundTrips / iterations, hitRatio: hits / (hits + misses), degraded };
}

interface Target {
  name: string;
  redis: RedisClient;
  store: RedisFeatureStore;
  cleanup: () => Promise<void>;
}

async function target(name: string, config: FeaturesConfig, itemIds: string[]): Promise<Target> {
  const redis = await connectRedis(config, logger);
  if (redis.status !== 'ready') throw new Error(`${name}: Redis not ready`);
  const prefix = `bench:${randomUUID().slice(0, 8)}:`;
  const keys = new RedisKeys(prefix, config.FEATURES_REDIS_SLOT_BUCKETS);
  await new RedisFeatureWriter(redis, keys).putRows([
    { entity: 'user', id: 'u1', fields: { age: 31, gender: 'f', city: 'c7', level: 4 } },
    ...itemIds.map((id, i) => ({ entity: 'item' as const, id, fields: itemRow(i) })),
  ]);
  const cache = new ItemCache({ maxEntries: 1_000_000, maxBytes: 512 << 20, ttlMs: 600_000 });
  const store = new RedisFeatureStore(
    redis,
    keys,
    cache,
    5000,
    new FeaturesMetrics(new Registry()),
  );
  const cleanup = async () => {
    // One key per DEL: auto-pipelined, and Cluster-safe (no multi-slot DEL).
    await Promise.all(
      [keys.key('user', 'u1'), ...itemIds.map((id) => keys.key('item', id))].map((k) =>
        redis.del(k),
      ),
    );
    await redis.quit();
  };
  return { name, redis, store, cleanup };
}

/** Median ms of `session.run` on 3,000 rows, best over 1..cores intra-op threads. */
async function rawInference(): Promise<{ best: number; threads: number; table: string[] }> {
  const feeds = ctrFeeds(ITEMS, 3);
  const tensors = Object.fromEntries(
    Object.entries(feeds).map(([name, f]) => [name, new Tensor(f.dtype, f.data, f.dims)]),
  );
  const table: string[] = [];
  let best = Infinity;
  let bestThreads = 1;
  for (let threads = 1; threads <= CORES; threads++) {
    const session = await rawSession(MODEL, threads);
    for (let i = 0; i < 3; i++) await session.run(tensors);
    const ms: number[] = [];
    for (let i = 0; i < 30; i++) {
      const t0 = performance.now();
      await session.run(tensors);
      ms.push(performance.now() - t0);
    }
    await session.release();
    ms.sort((a, b) => a - b);
    const p50 = percentile(ms, 50);
    table.push(
      `raw onnxruntime, ${ITEMS} rows, ${threads} intra-op thread(s): p50 ${p50.toFixed(2)} ms`,
    );
    if (p50 < best) [best, bestThreads] = [p50, threads];
  }
  return { best, threads: bestThreads, table };
}

function answers(hostPort: string): Promise<boolean> {
  const at = hostPort.lastIndexOf(':');
  return redisAnswers(Number(hostPort.slice(at + 1)), hostPort.slice(0, at));
}

function row(label: string, run: FetchRun, rawMs: number): string {
  const p50 = percentile(run.ms, 50);
  const p99 = percentile(run.ms, 99);
  return (
    `${label.padEnd(30)} p50 ${p50.toFixed(3).padStart(8)} ms  p99 ${p99.toFixed(3).padStart(8)} ms  ` +
    `x${(p50 / rawMs).toFixed(3)} raw inference  round trips ${run.roundTrips.toFixed(2)}  ` +
    `hit ratio ${run.hitRatio.toFixed(3)}  degraded ${run.degraded}/${run.ms.length}`
  );
}

async function main(): Promise<void> {
  Logger.overrideLogger(['error']);
  const itemIds = Array.from({ length: ITEMS }, (_, i) => `i${i}`);
  console.log(
    `bench:features on ${CORES} cores: fetch of ${ITEMS} items per request, ${ITERATIONS} ` +
      `iterations each, Redis ${REDIS_URL}`,
  );

  const raw = await rawInference();
  for (const line of raw.table) console.log(line);
  console.log(`raw inference best: ${raw.best.toFixed(2)} ms (${raw.threads} thread(s))\n`);

  const standalone = await target(
    'standalone',
    Object.assign(new FeaturesConfig(), { REDIS_URL }),
    itemIds,
  );
  let cold: FetchRun;
  let warm: FetchRun;
  try {
    await measure(standalone.store, itemIds, 20, true); // warm-up (JIT, connection)
    cold = await measure(standalone.store, itemIds, ITERATIONS, true);
    warm = await measure(standalone.store, itemIds, ITERATIONS, false);
  } finally {
    await standalone.cleanup();
  }
  console.log(row('standalone, cold cache', cold, raw.best));
  console.log(row('standalone, warm cache', warm, raw.best));

  const extra: Record<string, number> = {};
  const seeds = CLUSTER_NODES === '' ? [] : CLUSTER_NODES.split(',');
  if (seeds.length > 0 && (await answers(seeds[0]))) {
    // Plain layout (one slot per key) and the hash-tagged layout (FEATURES_REDIS_SLOT_BUCKETS).
    for (const buckets of [0, CLUSTER_SLOT_BUCKETS]) {
      const suffix = buckets === 0 ? '' : `_slot_buckets_${buckets}`;
      const cluster = await target(
        'cluster',
        Object.assign(new FeaturesConfig(), {
          REDIS_CLUSTER_NODES: CLUSTER_NODES,
          FEATURES_REDIS_SLOT_BUCKETS: buckets,
        }),
        itemIds,
      );
      try {
        await measure(cluster.store, itemIds, 5, true);
        const clusterCold = await measure(cluster.store, itemIds, CLUSTER_ITERATIONS, true);
        const clusterWarm = await measure(cluster.store, itemIds, CLUSTER_ITERATIONS, false);
        const layout = buckets === 0 ? 'one slot per key' : `${buckets} slot buckets`;
        console.log(
          row(`cluster (${seeds.length} seeds, ${layout}), cold cache`, clusterCold, raw.best),
        );
        console.log(
          row(`cluster (${seeds.length} seeds, ${layout}), warm cache`, clusterWarm, raw.best),
        );
        Object.assign(extra, {
          [`cluster${suffix}_cold_fetch_ms_p50`]: +percentile(clusterCold.ms, 50).toFixed(3),
          [`cluster${suffix}_warm_fetch_ms_p50`]: +percentile(clusterWarm.ms, 50).toFixed(3),
          [`cluster${suffix}_round_trips_per_request`]: +clusterCold.roundTrips.toFixed(2),
        });
      } finally {
        await cluster.cleanup();
      }
    }
  } else {
    console.log(`cluster: nothing answers on ${seeds[0] ?? '(none configured)'}; skipped`);
  }

  const coldP50 = percentile(cold.ms, 50);
  const warmP50 = percentile(warm.ms, 50);
  console.log(
    JSON.stringify({
      cores: CORES,
      items_per_request: ITEMS,
      iterations: ITERATIONS,
      cold_fetch_ms_p50: +coldP50.toFixed(3),
      cold_fetch_ms_p99: +percentile(cold.ms, 99).toFixed(3),
      warm_fetch_ms_p50: +warmP50.toFixed(3),
      warm_fetch_ms_p99: +percentile(warm.ms, 99).toFixed(3),
      redis_round_trips_per_request: +Math.max(cold.roundTrips, warm.roundTrips).toFixed(2),
      cache_hit_ratio: +warm.hitRatio.toFixed(4),
      degraded_fetches: cold.degraded + warm.degraded,
      raw_inference_ms_3000: +raw.best.toFixed(3),
      raw_inference_intra_op_threads: raw.threads,
      warm_fetch_to_inference_ratio: +(warmP50 / raw.best).toFixed(4),
      cold_fetch_to_inference_ratio: +(coldP50 / raw.best).toFixed(4),
      ...extra,
    }),
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
