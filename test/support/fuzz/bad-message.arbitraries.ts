/**
 * Messages the batch scorer must refuse, for the fuzz spec: unreadable values (empty, tombstones,
 * not JSON, truncated, binary), bodies that are no object, one bad field, an unknown scene, more
 * candidates than the model queue takes. Envelope problems are in bad-envelope.arbitrary.ts.
 */
import fc from 'fast-check';
import { atPath, Draft, exactly, FuzzLimits, invalid, NO_HEADERS, RANK_HEADERS } from './fuzz-case';
import { body, feedText, fieldMutation, request, text } from './rank-body.arbitraries';

/** A message with no usable body: its requestId can only come from the header. */
const unreadable = (kind: string, dlq: RegExp, value: fc.Arbitrary<string | Buffer | null>) =>
  fc.tuple(value, fc.boolean()).map(([v, named]): Draft => (ids) => {
    if (!named) return { kind, value: v, headers: NO_HEADERS, dlq };
    const requestId = ids.fresh();
    return {
      kind,
      value: v,
      headers: { [RANK_HEADERS.requestId]: requestId },
      answer: { requestId, status: 400, code: 'MALFORMED_JSON', path: 'body' },
      dlq,
    };
  });

const parses = (t: string) => {
  try {
    JSON.parse(t);
    return true;
  } catch {
    return false;
  }
};
export const empty = unreadable('empty', /^empty message value$/, fc.constantFrom(null, ''));
export const notJson = unreadable(
  'not-json',
  /^not JSON \(/,
  fc.oneof(
    fc
      .uint8Array({ minLength: 1, maxLength: 64 })
      .map((bytes) => Buffer.from(bytes))
      .filter((bytes) => !parses(bytes.toString('utf8'))),
    fc.tuple(body, fc.double({ min: 0, max: 1, noNaN: true })).map(([b, at]) => {
      const whole = feedText('cut', b);
      return whole.slice(0, 1 + Math.floor(at * (whole.length - 2)));
    }),
    fc.constantFrom(
      "{'a':1}",
      'NaN',
      '{"a":1,}',
      'undefined',
      '\u0000',
      '   ',
      '\uFEFF{}',
      '{"user":',
    ),
  ),
);

export const nonObject = fc
  .tuple(
    fc.constantFrom(
      '[1,2]',
      '7',
      '"s"',
      'true',
      'null',
      '[]',
      `[${'0,'.repeat(99_999)}0]`,
      `${'['.repeat(50_000)}${']'.repeat(50_000)}`,
    ),
    fc.boolean(),
  )
  .map(([value, named]): Draft => (ids) => {
    if (!named)
      return {
        kind: 'non-object',
        value,
        headers: NO_HEADERS,
        dlq: /^invalid request: requestId: is required/,
      };
    const requestId = ids.fresh();
    return {
      kind: 'non-object',
      value,
      headers: { [RANK_HEADERS.requestId]: requestId, [RANK_HEADERS.scene]: 'feed' },
      ...invalid(requestId, 'body', /^the body must be a JSON object$/),
    };
  });

export function badField(limits: FuzzLimits): fc.Arbitrary<Draft> {
  return fc.tuple(body, fieldMutation(limits.maxCandidates)).map(([b, mutate]): Draft => (ids) => {
    const requestId = ids.fresh();
    const [broken, path] = mutate(b);
    return {
      kind: `field/${path.replace(/\[\d+\]/g, '[i]')}`,
      value: feedText(requestId, broken),
      headers: NO_HEADERS,
      ...invalid(requestId, path, atPath(path)),
    };
  });
}

export const unknownScene: fc.Arbitrary<Draft> = fc
  .tuple(
    body,
    fc.constantFrom(
      'nope',
      'constructor',
      '__proto__',
      'toString',
      'hasOwnProperty',
      'FEED',
      ' feed',
      '../feed',
      'feed/v1',
      'é',
      's'.repeat(100),
    ),
    fc.boolean(),
  )
  .map(([b, scene, inHeader]): Draft => (ids) => {
    const requestId = ids.fresh();
    return {
      kind: 'unknown-scene',
      value: text(
        request(
          inHeader
            ? [['requestId', requestId]]
            : [
                ['requestId', requestId],
                ['scene', scene],
              ],
          b,
        ),
      ),
      headers: inHeader ? { [RANK_HEADERS.scene]: scene } : NO_HEADERS,
      answer: { requestId, status: 404, code: 'SCENE_NOT_FOUND', path: 'scene' },
      dlq: exactly(`unknown scene '${scene}'`),
    };
  });

export function tooLarge({
  queueRows,
  queueModel,
  maxCandidates,
}: FuzzLimits): fc.Arbitrary<Draft> {
  return fc
    .tuple(body, fc.integer({ min: queueRows + 1, max: maxCandidates }))
    .map(([b, n]): Draft => (ids) => {
      const requestId = ids.fresh();
      const candidates = Array.from({ length: n }, (_, i) => ({ id: `i${i + 1}` }));
      const limit = `scene feed version v1 takes at most ${queueRows} candidates per request (models.${queueModel}.batching.maxQueueRows)`;
      return {
        kind: 'too-large',
        value: feedText(requestId, { ...b, candidates }),
        headers: NO_HEADERS,
        answer: { requestId, status: 413, code: 'REQUEST_TOO_LARGE', path: 'candidates' },
        dlq: exactly(`request too large: ${n} candidates, but ${limit}`),
      };
    });
}
