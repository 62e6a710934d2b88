import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Metrics of feature fetching, the item cache and real-time updates. */
@Injectable()
export class FeaturesMetrics {
  readonly fetchMs: Histogram<'result'>;
  readonly roundTrips: Histogram<string>;
  readonly keysFetched: Counter<'entity'>;
  readonly cacheHits: Counter<string>;
  readonly cacheMisses: Counter<string>;
  readonly cacheEvictions: Counter<string>;
  readonly degraded: Counter<'reason'>;
  readonly badValues: Counter<'source' | 'reason'>;
  readonly updates: Counter<'result'>;
  readonly updateLagMs: Histogram<string>;
  readonly updateRetries: Counter<'topic' | 'partition'>;
  readonly deadLettersDropped: Counter<'reason'>;

  constructor(private readonly registry: Registry) {
    const registers = [registry];
    this.fetchMs = new Histogram({
      name: 'ranker_features_fetch_ms',
      help: 'Feature fetch time per rank request (cache and Redis)',
      labelNames: ['result'],
      buckets: [0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128],
      registers,
    });
    this.roundTrips = new Histogram({
      name: 'ranker_features_redis_round_trips',
      help: 'Redis round trips per rank request',
      buckets: [0, 1, 2, 3, 4, 8],
      registers,
    });
    this.keysFetched = new Counter({
      name: 'ranker_features_redis_keys_total',
      help: 'Keys read from Redis',
      labelNames: ['entity'],
      registers,
    });
    this.cacheHits = new Counter({
      name: 'ranker_features_cache_hits_total',
      help: 'Item cache hits',
      registers,
    });
    this.cacheMisses = new Counter({
      name: 'ranker_features_cache_misses_total',
      help: 'Item cache misses',
      registers,
    });
    this.cacheEvictions = new Counter({
      name: 'ranker_features_cache_evictions_total',
      help: 'Items evicted from the cache for room (not TTL expiry)',
      registers,
    });
    this.degraded = new Counter({
      name: 'ranker_features_degraded_total',
      help: 'Rank requests answered with defaults because Redis was slow or down, by reason (timeout, error)',
      labelNames: ['reason'],
      registers,
    });
    this.badValues = new Counter({
      name: 'ranker_features_bad_values_total',
      help: 'Stored or updated values that could not be used (the declared default was used instead)',
      labelNames: ['source', 'reason'],
      registers,
    });
    this.updates = new Counter({
      name: 'ranker_features_updates_total',
      help: 'Feature update messages, by result (written, stale, empty, refused_by_store, dead_lettered, failed: retried later, cache_refreshed)',
      labelNames: ['result'],
      registers,
    });
    this.updateLagMs = new Histogram({
      name: 'ranker_features_update_lag_ms',
      help: 'Time from an update message timestamp to its application',
      buckets: [1, 5, 10, 50, 100, 500, 1000, 5000, 30000],
      registers,
    });
    this.updateRetries = new Counter({
      name: 'ranker_features_update_retries_total',
      help: 'Chunks of feature updates that failed transiently (Redis or the DLQ down) and are fetched again, by topic and partition: a growing count is a stalled partition',
      labelNames: ['topic', 'partition'],
      registers,
    });
    this.deadLettersDropped = new Counter({
      name: 'ranker_features_dead_letters_dropped_total',
      help: 'Refused feature updates whose dead letter the broker refuses for good (e.g. MESSAGE_TOO_LARGE), by reason: logged and skipped',
      labelNames: ['reason'],
      registers,
    });
  }

  /** Gauges of the cache's current entries, absent ids and bytes, read at scrape time. */
  watchCache(cache: { size: number; negativeSize: number; bytes: number }): void {
    new Gauge({
      name: 'ranker_features_cache_negative_entries',
      help: 'Ids cached as absent from the store (their own LRU, ITEM_CACHE_MAX_NEGATIVE_ENTRIES)',
      registers: [this.registry],
      collect() {
        this.set(cache.negativeSize);
      },
    });
    new Gauge({
      name: 'ranker_features_cache_entries',
      help: 'Items in the in-process cache',
      registers: [this.registry],
      collect() {
        this.set(cache.size);
      },
    });
    new Gauge({
      name: 'ranker_features_cache_bytes',
      help: 'Approximate bytes held by the in-process cache',
      registers: [this.registry],
      collect() {
        this.set(cache.bytes);
      },
    });
  }
}
