import { errorCodes, FastifyInstance } from 'fastify';

/** A sign-in form is a few hundred bytes; nothing bigger is read. */
const FORM_BODY_LIMIT = 4096;
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)"?/i;

/**
 * Parses `application/x-www-form-urlencoded` (UTF-8) into URLSearchParams for the given routes
 * only, so the /admin page's HTML forms work without a script. Every other route refuses a form
 * body with the same 415 as before, without reading it.
 */
export function acceptFormsFor(fastify: FastifyInstance, routes: readonly string[]): void {
  const allowed = new Set(routes);
  fastify.addContentTypeParser('application/x-www-form-urlencoded', (request, payload, done) => {
    const charset = CHARSET.exec(request.headers['content-type'] ?? '')?.[1].toLowerCase();
    const utf8 = charset === undefined || charset === 'utf-8' || charset === 'utf8';
    if (!allowed.has(request.routeOptions.url ?? '') || !utf8) {
      done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(request.headers['content-type']));
      return;
    }
    if (Number(request.headers['content-length']) > FORM_BODY_LIMIT) {
      done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let finished = false;
    const finish = (error: Error | null, body?: URLSearchParams) => {
      if (finished) return;
      finished = true;
      payload.removeAllListeners('data');
      done(error, body);
    };
    payload.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > FORM_BODY_LIMIT) finish(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
      else chunks.push(chunk);
    });
    payload.on('end', () => finish(null, new URLSearchParams(Buffer.concat(chunks).toString())));
    payload.on('error', (error: Error) => finish(error));
  });
}
