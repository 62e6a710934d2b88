import type { IncomingMessage } from 'node:http';

/** What Node and Fastify raise when the request stream dies under the body parser. */
const ABORT_CODES = new Set(['ECONNRESET', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE']);

/**
 * True when `exception` is the client hanging up while its body was still arriving (Node's
 * "aborted" / ECONNRESET on the request stream, surfaced by Fastify's body reader). That is the
 * caller's doing, not a bug: it is logged as an aborted request, not as an error with a stack.
 * The request stream must be gone too, so a server-side ECONNRESET (say, from Redis) that
 * reaches the filter is never mistaken for one.
 */
export function isAbortedUpload(exception: unknown, raw: IncomingMessage): boolean {
  // Duck-typed: Node's own errors need not share this realm's Error (Jest's VM contexts).
  if (exception === null || typeof exception !== 'object') return false;
  if (!(raw.destroyed || raw.readableAborted)) return false;
  const { code, message } = exception as { code?: unknown; message?: unknown };
  return (typeof code === 'string' && ABORT_CODES.has(code)) || message === 'aborted';
}
