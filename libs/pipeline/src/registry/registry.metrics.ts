import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { SceneListing } from './scene-listing';

export type LoadOutcome = 'loaded' | 'rejected' | 'aborted';

const MS_BUCKETS = [50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000, 300_000];

/** Metrics of the scene registry: loads by outcome, version states, swap and drain times. */
@Injectable()
export class RegistryMetrics {
  readonly loads: Counter<'scene' | 'outcome'>;
  readonly loadMs: Histogram<'scene' | 'outcome'>;
  readonly swapMs: Histogram<'scene'>;
  readonly drainMs: Histogram<'scene'>;
  readonly notices: Counter<'result'>;
  private readonly versions: Gauge<'scene' | 'version' | 'state'>;
  private listing: () => SceneListing[] = () => [];

  constructor(registry: Registry) {
    const registers = [registry];
    this.loads = new Counter({
      name: 'ranker_bundle_reloads_total',
      help: 'Bundle version loads by outcome: loaded (valid, may serve), rejected (failed the gate), aborted (a file changed while loading; retried on the next scan)',
      labelNames: ['scene', 'outcome'],
      registers,
    });
    this.loadMs = new Histogram({
      name: 'ranker_bundle_load_ms',
      help: 'Time to load, validate and warm a bundle version, by outcome',
      labelNames: ['scene', 'outcome'],
      buckets: MS_BUCKETS,
      registers,
    });
    this.swapMs = new Histogram({
      name: 'ranker_bundle_swap_ms',
      help: 'Time from a change seen in BUNDLES_DIR (or a reload call) to the new stable version serving',
      labelNames: ['scene'],
      buckets: MS_BUCKETS,
      registers,
    });
    this.drainMs = new Histogram({
      name: 'ranker_bundle_drain_ms',
      help: 'Time from a version leaving service to its last request finishing and its models being released',
      labelNames: ['scene'],
      buckets: MS_BUCKETS,
      registers,
    });
    this.notices = new Counter({
      name: 'ranker_bundle_notices_total',
      help: 'Reload notices between replicas (Redis pub/sub), by result: sent, send_failed, received, refused (malformed)',
      labelNames: ['result'],
      registers,
    });
    const read = () => this.listing();
    this.versions = new Gauge({
      name: 'ranker_bundle_versions',
      help: 'Bundle versions by state (incomplete, available, loading, warming, ready, serving, draining, failed); one series per scene, version and state',
      labelNames: ['scene', 'version', 'state'],
      registers,
      collect() {
        this.reset();
        for (const scene of read())
          for (const v of scene.versions)
            this.inc({ scene: scene.scene, version: v.version, state: v.state });
      },
    });
  }

  /** The registry's listing, read at each scrape. */
  watch(listing: () => SceneListing[]): void {
    this.listing = listing;
  }
}
