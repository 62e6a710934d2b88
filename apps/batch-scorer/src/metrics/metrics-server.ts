import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { BatchScorerConfig } from '../batch-scorer.config';
import { RankRequestConsumer } from '../rank/rank-request.consumer';

/**
 * The worker's own small HTTP server (it has no other): `/metrics` for Prometheus,
 * `/health/live` while the process runs, `/health/ready` once bundles are loaded and the worker
 * consumes its topic. Plain node:http, as three fixed routes need no framework.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(MetricsServer.name);
  private server?: Server;

  constructor(
    private readonly config: BatchScorerConfig,
    private readonly registry: Registry,
    private readonly consumer: RankRequestConsumer,
  ) {}

  /** The port it listens on (BATCH_METRICS_PORT, or the one picked for 0). */
  get port(): number {
    return (this.server?.address() as AddressInfo | null)?.port ?? 0;
  }

  async onApplicationBootstrap(): Promise<void> {
    const server = createServer((request, response) => {
      void this.answer(request.method ?? 'GET', request.url ?? '/').then(
        ([status, type, body]) => response.writeHead(status, { 'content-type': type }).end(body),
        (error: Error) => {
          this.logger.error(`${request.url}: ${error.stack ?? error.message}`);
          response.writeHead(500).end();
        },
      );
    });
    const { BATCH_METRICS_PORT: port, BATCH_METRICS_HOST: host } = this.config;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.logger.log(`metrics and health on http://${host}:${this.port}`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  private async answer(method: string, url: string): Promise<[number, string, string]> {
    const path = url.split('?')[0];
    if (method !== 'GET') return [405, 'text/plain', 'method not allowed\n'];
    switch (path) {
      case '/metrics':
        return [200, this.registry.contentType, await this.registry.metrics()];
      case '/health/live':
        return [200, 'application/json', '{"status":"ok"}'];
      case '/health/ready': {
        const ready = this.consumer.consuming;
        return [ready ? 200 : 503, 'application/json', JSON.stringify({ ready })];
      }
      default:
        return [404, 'text/plain', 'not found\n'];
    }
  }
}
