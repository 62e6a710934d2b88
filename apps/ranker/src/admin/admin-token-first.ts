import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { toErrorBody } from '../http/http-exception.filter';
import { noteErrorCode } from '../http/http-metrics';
import type { AdminTokenGuard } from './admin-token.guard';

/** The admin API's routes (AdminController's), as Fastify names the route a request matched. */
export function isAdminApiRoute(route: string | undefined): boolean {
  return route !== undefined && (route === '/v1/admin' || route.startsWith('/v1/admin/'));
}

/**
 * Checks the admin token of a call to the admin API in Fastify's onRequest hook, before its body
 * is read: a caller without the token (or with a forged one) gets its 401 or 403 whatever the
 * body, never a 400, 413 or 415 that would tell it the body was read, nor costs the parse of a
 * large one. The route's own AdminTokenGuard still runs (the same check, passing by then).
 * `guard` gives the guard once the app is built; until then (and where the admin API is off)
 * nothing is checked here.
 */
export function checkAdminTokenFirst(
  fastify: FastifyInstance,
  guard: () => AdminTokenGuard | undefined,
): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    const admin = guard();
    if (admin === undefined || !isAdminApiRoute(request.routeOptions.url)) {
      done();
      return;
    }
    try {
      admin.check(request);
    } catch (error) {
      refuse(error, request, reply);
      return;
    }
    done();
  });
}

/** The refusal as the exception filter writes it (the guard has logged and counted it). */
function refuse(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const [status, body] = toErrorBody(error);
  body.requestId = request.id;
  noteErrorCode(request, body.code);
  if (status === 401) void reply.header('www-authenticate', 'Bearer realm="ranker-admin"');
  void reply.status(status).send(body);
}
