import { FastifyAdapter } from '@nestjs/platform-fastify';

/**
 * A Fastify adapter that knows when the app has begun to shut down. From then on every response
 * carries `connection: close`: a keep-alive client would otherwise hold its idle connection open
 * and the HTTP server's close (which waits for every connection) would wait for the keep-alive
 * timeout instead of for the in-flight requests alone. Requests that arrive after the signal are
 * answered 503 by the adapter itself (Nest's `return503OnClosing`).
 */
export class DrainingFastifyAdapter extends FastifyAdapter {
  private drainingSince: number | undefined;

  get draining(): boolean {
    return this.drainingSince !== undefined;
  }

  override beforeClose(): void {
    this.drainingSince ??= Date.now();
    super.beforeClose();
  }
}
