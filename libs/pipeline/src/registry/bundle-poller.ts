import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { PipelineConfig } from '../pipeline.config';
import { SceneRegistry } from './scene-registry';

/**
 * Scans BUNDLES_DIR every BUNDLES_POLL_INTERVAL_MS once the boot-time load is done; the next scan
 * is timed from the end of the last one, so scans never pile up behind a slow load. This is also
 * how a replica that missed a broadcast catches up.
 */
@Injectable()
export class BundlePoller implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly registry: SceneRegistry,
    private readonly config: PipelineConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.BUNDLES_POLL_INTERVAL_MS === 0) return;
    void this.registry.whenLoaded().then(() => this.schedule());
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.registry.reload(undefined, { origin: 'poll' }).then(() => this.schedule());
    }, this.config.BUNDLES_POLL_INTERVAL_MS);
    this.timer.unref();
  }
}
