import { errorCodes, FastifyInstance } from 'fastify';
import { fastParse } from '@app/pipeline';

/** `charset` of a content-type header, lower-cased and unquoted; undefined when absent. */
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)"?/i;

/**
 * Makes `application/json` in UTF-8 the only body the app parses; every other type (text,
 * form and multipart bodies, `application/json-patch+json`, a body without a content type,
 * JSON in another charset) gets 415 from Fastify. Nest's own body parsers are off (the app
 * is created with `bodyParser: false`), so no form parser comes back in.
 *
 * Prototype-named keys (`__proto__`, `constructor`) are parsed as the plain own properties
 * JSON.parse makes of them, not refused by the parser: the rank validation reads names only
 * as own properties, refuses them as fields and takes them as ordinary feature names, so the
 * caller gets the path of the problem instead of a generic "forbidden prototype property".
 */
export function acceptJsonOnly(fastify: FastifyInstance): void {
  fastify.removeAllContentTypeParsers();
  const parseJson = fastify.getDefaultJsonParser('ignore', 'ignore');
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const charset = CHARSET.exec(request.headers['content-type'] ?? '')?.[1].toLowerCase();
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(request.headers['content-type']));
      return;
    }
    // A rank request's candidate array by the fast path (same result as JSON.parse: see
    // fastParse), anything else by Fastify's parser, with its errors.
    const fast = fastParse(body as string);
    if (fast !== undefined) done(null, fast.value);
    else parseJson(request, body as string, done);
  });
}
