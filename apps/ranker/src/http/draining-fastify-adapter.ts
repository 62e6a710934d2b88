import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyServerOptions } from 'fastify';
import type { Server } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A Fastify adapter that knows when the app has begun to shut down. From then on every response
 * carries `connection: close`: a keep-alive client would otherwise hold its idle connection open
 * and the HTTP server's close (which waits for every connection) would wait for the keep-alive
 * timeout instead of for the in-flight requests alone.
 *
 * The server itself closes `idleGraceMs` after the shutdown began, not at once (at once when no
 * connection is open). Closing destroys every connection that is idle as far as the server has
 * read, and a request its client had already sent on a kept-alive connection may still sit unread
 * in the socket's buffer (the event loop busy with another request's work when the signal came):
 * destroying the socket then resets the client's request (ECONNRESET), where a client hears
 * nothing it can act on. During the grace such a request is read and answered, with
 * `connection: close`; once the server closes, requests that reach it are answered 503 (Fastify's
 * `return503OnClosing`).
 */
export class DrainingFastifyAdapter extends FastifyAdapter {
  private drainingSince: number | undefined;

  constructor(
    options: FastifyServerOptions,
    private readonly idleGraceMs: number,
  ) {
    super(options);
    this.getInstance().addHook('onSend', async (_request, reply) => {
      if (this.draining) reply.header('connection', 'close');
    });
  }

  get draining(): boolean {
    return this.drainingSince !== undefined;
  }

  override beforeClose(): void {
    this.drainingSince ??= Date.now();
    super.beforeClose();
  }

  override async close(): Promise<void> {
    this.drainingSince ??= Date.now();
    const left = this.drainingSince + this.idleGraceMs - Date.now();
    // With no connection open there is nothing to read: no need to wait.
    if (left > 0 && (await this.connectionCount()) > 0) await sleep(left);
    return super.close();
  }

  private connectionCount(): Promise<number> {
    const server = this.getHttpServer() as Server | undefined;
    if (!server) return Promise.resolve(0);
    return new Promise((done) => server.getConnections((error, count) => done(error ? 1 : count)));
  }
}
