/**
 * Rank request bodies for the fuzz spec: valid ones (hostile feature names and values, prototype
 * ids, unicode), and one field of a valid one made wrong, with the path it must be refused at.
 */
import fc from 'fast-check';
import { Json, own } from './fuzz-case';

const featureName = fc.constantFrom(
  'age',
  'price',
  'hour',
  'device',
  'constructor',
  'toString',
  '__proto__',
  'valueOf',
  'hasOwnProperty',
  '😀',
  'a b',
  '',
);
const featureValue = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.boolean(),
);
const featureMap = fc
  .uniqueArray(fc.tuple(featureName, featureValue), { selector: ([n]) => n, maxLength: 3 })
  .map(own);
const itemId = fc.oneof(
  { arbitrary: fc.integer({ min: 1, max: 5000 }).map((i) => `i${i}`), weight: 6 },
  {
    arbitrary: fc.constantFrom('constructor', '__proto__', 'toString', 'é 😀', '键', 'a"b\\c'),
    weight: 1,
  },
);
const candidate = fc
  .tuple(itemId, fc.option(featureMap, { nil: undefined, freq: 3 }))
  .map(([id, features]): Json => (features ? { id, features } : { id }));
/** A valid rank request body (no envelope). */
export const body = fc.record(
  {
    user: fc.record(
      {
        id: fc.constantFrom('u1', 'u2', 'u3', '__proto__', 'constructor', '😀', 'u'.repeat(256)),
        features: featureMap,
      },
      { requiredKeys: ['id'] },
    ),
    context: featureMap,
    candidates: fc.uniqueArray(candidate, { selector: (c) => c.id, minLength: 1, maxLength: 12 }),
    topK: fc.integer({ min: 1, max: 20 }),
    timeoutMs: fc.constant(60_000),
  },
  { requiredKeys: ['user', 'candidates'] },
) as fc.Arbitrary<Json>;

/** The envelope's fields first, then the body's (own keys kept, `__proto__` included). */
export const request = (envelope: [string, unknown][], b: Json) =>
  own([...envelope, ...Object.entries(b)]);
/** Stands for an array nested DEEP levels: JSON.stringify itself overflows the stack on it. */
const DEEP_MARK = '\u0000deep\u0000';
const DEEP = 10_000;
export const text = (value: unknown) =>
  JSON.stringify(value).replaceAll(
    JSON.stringify(DEEP_MARK),
    `${'['.repeat(DEEP)}${']'.repeat(DEEP)}`,
  );
/** The JSON text of `b` as a request for scene feed with this requestId in the value. */
export const feedText = (requestId: unknown, b: Json) =>
  text(
    request(
      [
        ['requestId', requestId],
        ['scene', 'feed'],
      ],
      b,
    ),
  );

/** One field of a valid body made wrong: [the broken body, the path it must be refused at]. */
export function fieldMutation(maxCandidates: number): fc.Arbitrary<(b: Json) => [Json, string]> {
  const set = (key: string, value: unknown, path: string) =>
    fc.constant((b: Json): [Json, string] => [
      own([...Object.entries(b).filter(([k]) => k !== key), [key, value]]),
      path,
    ]);
  const bad = <T>(values: T[]) => fc.constantFrom(...values);
  const candidates = (b: Json) => b.candidates as Json[];
  const withCandidate =
    (k: number, make: (c: Json) => unknown, suffix: string) =>
    (b: Json): [Json, string] => {
      const list: unknown[] = [...candidates(b)];
      const i = k % list.length;
      list[i] = make(candidates(b)[i]);
      return [
        own([...Object.entries(b).filter(([key]) => key !== 'candidates'), ['candidates', list]]),
        `candidates[${i}]${suffix}`,
      ];
    };
  return fc.oneof(
    bad([7, '', null, 'x'.repeat(257), {}, []]).chain((id) => set('user', { id }, 'user.id')),
    bad([[], null, 'u1', 7]).chain((user) => set('user', user, 'user')),
    set('user', { id: 'u1', name: 'x' }, 'user.name'),
    bad([{ a: { b: 1 } }, [1], 'x', null, { a: DEEP_MARK }]).chain((features) =>
      set('user', { id: 'u1', features }, 'user.features'),
    ),
    bad([{}, [], 'x', null]).chain((c) => set('candidates', c, 'candidates')),
    fc.integer({ min: maxCandidates + 1, max: maxCandidates + 50 }).chain((n) =>
      set(
        'candidates',
        Array.from({ length: n }, (_, i) => ({ id: `i${i}` })),
        'candidates',
      ),
    ),
    fc
      .tuple(fc.nat(), bad([5, '', null, 'x'.repeat(257)]))
      .map(([k, id]) => withCandidate(k, (c) => ({ ...c, id }), '.id')),
    fc.tuple(fc.nat(), bad(['x', 7, [], null])).map(([k, c]) => withCandidate(k, () => c, '')),
    fc
      .tuple(fc.nat(), bad([{ a: [1] }, { a: { b: 1 } }, [], 'x']))
      .map(([k, features]) => withCandidate(k, (c) => ({ id: c.id, features }), '.features')),
    fc.nat().map((k) => withCandidate(k, (c) => ({ ...c, extra: 1 }), '.extra')),
    fc.constant((b: Json): [Json, string] => {
      const list = candidates(b);
      return [
        own([
          ...Object.entries(b).filter(([k]) => k !== 'candidates'),
          ['candidates', [...list, { id: list[0].id }]],
        ]),
        `candidates[${list.length}].id`,
      ];
    }),
    bad(['5', 0, -1, 1.5, null, {}]).chain((topK) => set('topK', topK, 'topK')),
    bad([0, 60_001, '100', null, 1.5]).chain((t) => set('timeoutMs', t, 'timeoutMs')),
    bad([[], 'x', { a: { b: 1 } }, null, DEEP_MARK]).chain((c) => set('context', c, 'context')),
    fc
      .constantFrom<[string, string]>(
        ['topk', 'topk'],
        ['extra', 'extra'],
        ['constructor', 'constructor'],
        ['__proto__', '__proto__'],
        ['a b', 'body["a b"]'],
        ['', 'body[""]'],
      )
      .chain(([key, path]) => set(key, {}, path)),
    fc
      .constantFrom('user', 'candidates')
      .map((key) => (b: Json): [Json, string] => [
        own(Object.entries(b).filter(([k]) => k !== key)),
        key,
      ]),
  );
}
