import { CanActivate, ExecutionContext, Injectable, Logger } from '@nestjs/common';
import { ForbiddenError, UnauthorizedError } from '@app/common';
import type { FastifyRequest } from 'fastify';
import { createHash, timingSafeEqual } from 'node:crypto';
import { AdminConfig } from './admin.config';
import { AdminMetrics } from './admin.metrics';

const BEARER = /^Bearer[ \t]+([\x21-\x7e]+)[ \t]*$/i;
const PATH = 'headers.authorization';

/**
 * Lets a request through only with `Authorization: Bearer <RANKER_ADMIN_TOKEN>`: 401 without a
 * bearer token, 403 with another one. The comparison takes the same time whatever the token
 * (both sides hashed to equal lengths, then timingSafeEqual); refusals are logged and counted,
 * never with the token.
 */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  private readonly logger = new Logger('AdminAuth');
  private readonly expected: Buffer;

  constructor(
    config: AdminConfig,
    private readonly metrics: AdminMetrics,
  ) {
    this.expected = digest(config.RANKER_ADMIN_TOKEN);
  }

  canActivate(context: ExecutionContext): boolean {
    this.check(context.switchToHttp().getRequest<FastifyRequest>());
    return true;
  }

  /**
   * Throws UnauthorizedError or ForbiddenError unless `request` carries the admin token. Also run
   * by the ranker's onRequest hook for the admin API's routes (adminTokenFirst), before the body
   * is read, so a caller without the token learns that and nothing about its body.
   */
  check(request: FastifyRequest): void {
    const header = request.headers.authorization;
    const token = typeof header === 'string' ? BEARER.exec(header)?.[1] : undefined;
    const call = `${request.method} ${request.url} from ${request.ip} requestId=${request.id}`;
    if (token === undefined) {
      this.metrics.authFailures.inc({ reason: 'missing' });
      this.logger.warn(`admin call without a bearer token: ${call}`);
      const message = 'the admin API needs the header Authorization: Bearer <RANKER_ADMIN_TOKEN>';
      throw new UnauthorizedError(message, [{ path: PATH, message }]);
    }
    if (!timingSafeEqual(digest(token), this.expected)) {
      this.metrics.authFailures.inc({ reason: 'invalid' });
      this.logger.warn(`admin call with a wrong token: ${call}`);
      const message = 'the bearer token is not the admin token';
      throw new ForbiddenError(message, [{ path: PATH, message }]);
    }
  }
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}
