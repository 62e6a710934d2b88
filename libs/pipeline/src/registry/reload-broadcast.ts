import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ThrottledWarnings } from '@app/common';
import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { PipelineConfig } from '../pipeline.config';
import { RegistryMetrics } from './registry.metrics';
import { SceneRegistry } from './scene-registry';
import { ReloadNotice } from './scene-listing';
import { FOLDER_NAME } from './version-folders';

const RETRY_MS = (attempt: number) => Math.min(100 * attempt, 2000);

/**
 * Carries reload notices between replicas over Redis pub/sub (BUNDLES_BROADCAST_REDIS_URL; off
 * when empty). What one replica saw change in BUNDLES_DIR, or was asked to reload, every other
 * replica on BUNDLES_BROADCAST_CHANNEL scans at once instead of at its next poll. A notice carries
 * no bundle, only which scene to scan, so a forged one costs a scan. Redis being down delays
 * nothing but the notices: a replica that missed one catches up on its next poll.
 */
@Injectable()
export class ReloadBroadcast implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ReloadBroadcast.name);
  private readonly warnings = new ThrottledWarnings(this.logger);
  /** Tells this replica's own notices apart when they come back. */
  private readonly origin = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private publisher: Redis | undefined;
  private subscriber: Redis | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly registry: SceneRegistry,
    private readonly config: PipelineConfig,
    private readonly metrics: RegistryMetrics,
  ) {}

  onApplicationBootstrap(): void {
    const url = this.config.BUNDLES_BROADCAST_REDIS_URL;
    if (url === '') return;
    const channel = this.config.BUNDLES_BROADCAST_CHANNEL;
    const options = { connectTimeout: 2000, retryStrategy: RETRY_MS, maxRetriesPerRequest: 1 };
    // Publishing fails fast while disconnected; the subscription waits for the connection and is
    // renewed by ioredis after every reconnect.
    this.publisher = this.watch(new Redis(url, { ...options, enableOfflineQueue: false }), url);
    this.subscriber = this.watch(new Redis(url, options), url);
    this.subscriber.on('message', (_channel: string, text: string) => this.receive(text));
    this.subscriber.subscribe(channel).then(
      () => this.logger.log(`reload notices on ${url} channel ${channel}`),
      (error: Error) => this.logger.warn(`cannot subscribe to ${channel}: ${error.message}`),
    );
    this.unsubscribe = this.registry.onNotice((notice) => this.publish(notice));
  }

  /** A notice still in flight at shutdown is dropped: the other replicas' polls cover it. */
  onApplicationShutdown(): void {
    this.unsubscribe?.();
    this.publisher?.disconnect();
    this.subscriber?.disconnect();
  }

  private publish(notice: ReloadNotice): void {
    const text = JSON.stringify({ origin: this.origin, ...notice });
    this.publisher!.publish(this.config.BUNDLES_BROADCAST_CHANNEL, text).then(
      () => this.metrics.notices.inc({ result: 'sent' }),
      (error: Error) => {
        this.metrics.notices.inc({ result: 'send_failed' });
        this.warnings.warn(
          `reload notice for ${notice.scene ?? 'every scene'} not sent (${error.message}); other replicas catch up on their next poll`,
        );
      },
    );
  }

  private receive(text: string): void {
    const notice = parseNotice(text);
    if (typeof notice === 'string') {
      this.metrics.notices.inc({ result: 'refused' });
      this.warnings.warn(`reload notice refused: ${notice}`);
      return;
    }
    if (notice.origin === this.origin) return;
    this.metrics.notices.inc({ result: 'received' });
    this.logger.log(
      `reload notice from ${notice.origin}: scanning ${notice.scene ?? 'every scene'}${notice.retryFailed ? ', failed versions included' : ''}`,
    );
    void this.registry.reload(notice.scene, {
      retryFailed: notice.retryFailed,
      origin: 'broadcast',
    });
  }

  private watch(client: Redis, url: string): Redis {
    let last = '';
    client.on('error', (error: Error) => {
      if (error.message !== last)
        this.logger.warn(`reload notices, redis ${url}: ${error.message}`);
      last = error.message;
    });
    client.on('ready', () => (last = ''));
    return client;
  }
}

/** The notice, or why the message is not one. */
export function parseNotice(text: string): (ReloadNotice & { origin: string }) | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'not JSON';
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return 'not a JSON object';
  const { origin, scene, retryFailed } = value as Record<string, unknown>;
  if (typeof origin !== 'string' || origin === '' || origin.length > 200)
    return 'origin must be a string of 1-200 characters';
  if (scene !== undefined && (typeof scene !== 'string' || !FOLDER_NAME.test(scene)))
    return `scene must be a folder name matching ${FOLDER_NAME}`;
  if (typeof retryFailed !== 'boolean') return 'retryFailed must be a boolean';
  return { origin, retryFailed, ...(scene !== undefined && { scene: scene as string }) };
}
