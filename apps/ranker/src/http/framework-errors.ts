import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { toErrorBody } from './http-exception.filter';
import { httpWarnings, noteErrorCode } from './http-metrics';

/**
 * Fastify's `frameworkErrors`: the router's own refusals (a path parameter over
 * `maxParamLength`, 414; a malformed percent-encoding, 400) happen before any route, so Nest's
 * exception filter never sees them. They get the same error body, found by the rank fuzz spec.
 */
export function sendFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const [status, body] = toErrorBody(error);
  body.requestId = request.id;
  noteErrorCode(request, body.code);
  httpWarnings.warn(
    `${request.method} requestId=${request.id}: ${status} ${body.code} ${body.message}`,
  );
  void reply.header('x-request-id', request.id).status(status).send(body);
}
