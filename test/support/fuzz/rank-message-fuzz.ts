/**
 * Generated batch-scorer input for the fuzz spec: hostile messages (not JSON, truncated JSON,
 * binary garbage, empty values and tombstones, wrong types, huge and deep arrays, unknown fields
 * and scenes, missing, bad, duplicate and contradictory requestIds and scenes, prototype names,
 * requests larger than a model queue) mixed with valid requests, on hostile keys and headers.
 * Each message comes with what the README's rules say must come of it: the result its requestId
 * gets (status, code, detail path), and whether it is dead-lettered, with a pattern of its
 * `x-dlq-reason`. The model is written from the README, not from the code under test.
 */
import fc from 'fast-check';
import { badEnvelope } from './bad-envelope.arbitrary';
import {
  badField,
  empty,
  nonObject,
  notJson,
  tooLarge,
  unknownScene,
} from './bad-message.arbitraries';
import {
  Draft,
  FuzzCase,
  FuzzHeaders,
  FuzzLimits,
  HeaderValue,
  idStyle,
  NO_HEADERS,
  own,
  RANK_HEADERS,
  RequestIds,
} from './fuzz-case';
import { body, feedText, request, text } from './rank-body.arbitraries';

const valid: fc.Arbitrary<Draft> = fc
  .record({
    b: body,
    place: fc.constantFrom('value', 'headers', 'mixed', 'agree', 'duplicate-keys'),
    style: idStyle,
    again: fc.option(fc.nat(), { freq: 8, nil: undefined }),
  })
  .map(({ b, place, style, again }) => (ids) => {
    const requestId = again === undefined ? ids.fresh(style) : ids.again(again);
    const answer = { requestId, status: 200, code: 'ok' };
    const kind = `valid/${place}`;
    const inHeaders = { [RANK_HEADERS.requestId]: requestId, [RANK_HEADERS.scene]: 'feed' };
    switch (place) {
      case 'headers':
        return { kind, value: text(b), headers: inHeaders, answer };
      case 'mixed':
        return {
          kind,
          value: text(request([['requestId', requestId]], b)),
          headers: { [RANK_HEADERS.scene]: 'feed' },
          answer,
        };
      case 'agree':
        return {
          kind,
          value: feedText(requestId, b),
          headers: inHeaders,
          answer,
        };
      case 'duplicate-keys': {
        // A JSON object with repeated names: the last one counts.
        const rest = feedText(requestId, b).slice(1);
        return {
          kind,
          value: `{"requestId":"not-me","scene":"nope",${rest}`,
          headers: NO_HEADERS,
          answer,
        };
      }
      default:
        return {
          kind,
          value: feedText(requestId, b),
          headers: NO_HEADERS,
          answer,
        };
    }
  });

/** Header names a rank message may carry beside its own, with hostile values. */
const NOISE = ['trace', '__proto__', 'constructor', 'bin', 'long', 'repeated', 'nothing'] as const;
const noise = fc
  .tuple(
    fc.subarray([...NOISE]),
    fc.uint8Array({ maxLength: 24 }),
    fc.string({ unit: 'grapheme', maxLength: 16 }),
  )
  .map(
    ([names, bytes, t]) =>
      own(
        names.map((name): [string, HeaderValue | HeaderValue[]] => {
          if (name === 'bin') return [name, Buffer.from(bytes)];
          if (name === 'long') return [name, 'h'.repeat(10_000)];
          if (name === 'repeated') return [name, ['first', t, Buffer.from(bytes), null]];
          if (name === 'nothing') return [name, null];
          return [name, t];
        }),
      ) as FuzzHeaders,
  );
const key = fc.oneof(
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }), weight: 6 },
  { arbitrary: fc.constant(null), weight: 2 },
  {
    arbitrary: fc.uint8Array({ minLength: 1, maxLength: 16 }).map((b) => Buffer.from(b)),
    weight: 2,
  },
  { arbitrary: fc.constant('k'.repeat(50_000)), weight: 1 },
);

/** Every kind of message, valid ones most often, each on a hostile key and extra headers. */
export function fuzzMessages(limits: FuzzLimits): fc.Arbitrary<(ids: RequestIds) => FuzzCase> {
  const kinds = fc.oneof(
    { arbitrary: valid, weight: 12 },
    { arbitrary: empty, weight: 1 },
    { arbitrary: notJson, weight: 2 },
    { arbitrary: nonObject, weight: 1 },
    { arbitrary: badField(limits), weight: 4 },
    { arbitrary: badEnvelope, weight: 3 },
    { arbitrary: unknownScene, weight: 1 },
    { arbitrary: tooLarge(limits), weight: 1 },
  );
  return fc.tuple(kinds, key, noise).map(([draft, k, extra]) => (ids) => {
    const made = draft(ids);
    return {
      ...made,
      key: k,
      headers: own([...Object.entries(extra), ...Object.entries(made.headers)]) as FuzzHeaders,
    };
  });
}
