import fc from 'fast-check';
import { RequestInvalidError } from '@app/common';
import { MAX_REQUEST_DETAILS, validateRankRequest } from './rank-request-validation';

/**
 * Properties of validateRankRequest over generated bodies, hostile and valid: it only ever
 * throws RequestInvalidError, every detail names a path, and whatever it accepts satisfies the
 * contract (checked here independently of the validator's own code).
 */

const MAX = 8;
const FIELDS = ['user', 'context', 'candidates', 'topK', 'timeoutMs', 'id', 'features'];
const PROTO = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype'];

/** 2,000-10,000 levels of arrays and objects, built once (fast-check would recurse to build them). */
const deepText = (levels: number, object: boolean) =>
  object
    ? '{"a":'.repeat(levels) + '1' + '}'.repeat(levels)
    : '['.repeat(levels) + ']'.repeat(levels);
const DEEP_TEXT = [
  deepText(2_000, false),
  deepText(10_000, false),
  deepText(2_000, true),
  deepText(5_000, true),
];
const DEEP: unknown[] = DEEP_TEXT.map((text) => JSON.parse(text));

const oddString = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.constantFrom('\0', '\ud800', 'a\udfffb', '\u202eevil', '\ufeff', ' ', 'x'.repeat(300)),
);
const key = fc.oneof(fc.string(), oddString, fc.constantFrom(...PROTO, ...FIELDS));
const featureValue = fc.oneof(
  fc.string(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.integer(),
);
const validFeatures = fc.dictionary(fc.oneof(key, fc.constantFrom(...PROTO)), featureValue, {
  maxKeys: 6,
});
const validId = fc.oneof(
  fc.string({ minLength: 1, maxLength: 4 }),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 256 }),
  fc.constantFrom('\0', '\ud800', '__proto__', 'constructor', '\u202eevil'),
);

/** Bodies valid most of the time in each part and hostile otherwise (deep values among them). */
function bodies(): fc.Arbitrary<unknown> {
  // Deep values are rarer than the rest: each costs a JSON.parse of thousands of levels.
  const hostile: fc.Arbitrary<unknown> = fc.oneof(
    {
      weight: 5,
      arbitrary: fc.anything({
        key,
        maxDepth: 3,
        withNullPrototype: true,
        withBoxedValues: true,
        withMap: true,
      }),
    },
    { weight: 1, arbitrary: fc.constantFrom(...DEEP) },
    {
      weight: 5,
      arbitrary: fc.constantFrom(
        NaN,
        Infinity,
        -Infinity,
        -0,
        1e308,
        -1e308,
        2 ** 53,
        null,
        undefined,
        '',
        [],
      ),
    },
    { weight: 2, arbitrary: fc.date() },
    { weight: 5, arbitrary: oddString },
  );
  const maybe = <T>(valid: fc.Arbitrary<T>) =>
    fc.oneof({ weight: 4, arbitrary: valid }, { weight: 1, arbitrary: hostile });
  const features = maybe(
    fc.oneof(validFeatures, fc.dictionary(key, fc.oneof(featureValue, hostile), { maxKeys: 4 })),
  );
  const extra = fc.dictionary(key, hostile, { maxKeys: 2 });
  const entity = fc
    .tuple(
      fc.record({ id: maybe(fc.oneof(validId, oddString)), features }, { requiredKeys: [] }),
      fc.option(extra, { freq: 5 }),
    )
    .map(([fields, more]) => ({ ...fields, ...(more ?? {}) }));
  return maybe(
    fc
      .tuple(
        fc.record(
          {
            user: maybe(entity),
            context: features,
            candidates: maybe(fc.array(maybe(entity), { maxLength: MAX + 2 })),
            topK: maybe(fc.integer({ min: -2, max: 20 })),
            timeoutMs: maybe(fc.integer({ min: -1, max: 60_002 })),
          },
          { requiredKeys: [] },
        ),
        fc.option(extra, { freq: 5 }),
      )
      .map(([fields, more]) => Object.assign(fields, more ?? {})),
  );
}

const body = bodies();
/**
 * The same kind of bodies as JSON text parsed back, as the edges see them (`__proto__` becomes
 * an own key). The deep values travel as markers and are spliced in as text: JSON.stringify
 * recurses (slow at 2,000 levels, a stack overflow at 10,000), JSON.parse does not.
 */
const DEEP_MARK = /"\\u0000\\u0001deep(\d)"/g;
const parsedBody = body.map((value) => {
  try {
    const text = JSON.stringify(value, (_key, v: unknown) => {
      const i = DEEP.indexOf(v);
      return i < 0 ? v : `\u0000\u0001deep${i}`;
    });
    if (text === undefined) return value;
    return JSON.parse(text.replace(DEEP_MARK, (_m, i: string) => DEEP_TEXT[Number(i)])) as unknown;
  } catch {
    return value; // a BigInt or a cycle: keep the value itself
  }
});

type Plain = Record<string, unknown>;
const own = (o: Plain, name: string) => Object.prototype.hasOwnProperty.call(o, name);
const isPlain = (v: unknown): v is Plain =>
  v !== null &&
  typeof v === 'object' &&
  [Object.prototype, null].includes(Object.getPrototypeOf(v) as object | null);
const onlyKeys = (o: Plain, allowed: string[]) =>
  Object.getOwnPropertyNames(o).every((k) => allowed.includes(k));
const isId = (v: unknown) => typeof v === 'string' && v.length >= 1 && v.length <= 256;
const isFeatureMap = (v: unknown) =>
  isPlain(v) &&
  Object.getOwnPropertyNames(v).every((k) => {
    const f = v[k];
    return typeof f === 'string' || typeof f === 'boolean' || Number.isFinite(f);
  });
const isEntity = (v: unknown) =>
  isPlain(v) &&
  onlyKeys(v, ['id', 'features']) &&
  isId(v.id) &&
  (!own(v, 'features') || isFeatureMap(v.features));

/** The README's rules, written without looking at the validator. */
function satisfiesContract(r: unknown): boolean {
  if (!isPlain(r) || !onlyKeys(r, ['user', 'context', 'candidates', 'topK', 'timeoutMs']))
    return false;
  const { user, context, candidates, topK, timeoutMs } = r;
  if (!isEntity(user)) return false;
  if (own(r, 'context') && !isFeatureMap(context)) return false;
  if (!Array.isArray(candidates) || candidates.length < 1 || candidates.length > MAX) return false;
  if (!candidates.every(isEntity)) return false;
  if (new Set(candidates.map((c: Plain) => c.id)).size !== candidates.length) return false;
  if (own(r, 'topK') && !(Number.isInteger(topK) && (topK as number) >= 1)) return false;
  return (
    !own(r, 'timeoutMs') ||
    (Number.isInteger(timeoutMs) && (timeoutMs as number) >= 1 && (timeoutMs as number) <= 60_000)
  );
}

/** Runs the validator; fails the property on anything but a RequestInvalidError. */
function outcome(value: unknown): { accepted: unknown } | { error: RequestInvalidError } {
  try {
    return { accepted: validateRankRequest(value, MAX) };
  } catch (error) {
    if (!(error instanceof RequestInvalidError)) throw error;
    return { error };
  }
}

/**
 * One run: the validator either accepts (then it returns the body itself, which satisfies the
 * contract) or throws a RequestInvalidError with 1-50 pathed details, and the body breaks the
 * contract. Plain booleans, not expect(): 100k runs of expect() cost more than the validator.
 */
function holds(value: unknown): boolean {
  const result = outcome(value);
  if ('accepted' in result) return result.accepted === value && satisfiesContract(value);
  const { details } = result.error;
  return (
    details.length > 0 &&
    details.length <= MAX_REQUEST_DETAILS &&
    details.every((d) => typeof d.path === 'string' && d.path !== '' && d.message !== '') &&
    !satisfiesContract(value)
  );
}

describe('validateRankRequest (properties)', () => {
  it.each([
    ['generated values', body],
    ['generated JSON', parsedBody],
  ])(
    'on %s: throws only RequestInvalidError with pathed details, accepts only the contract',
    (_name, arbitrary) => {
      fc.assert(fc.property(arbitrary, holds), { numRuns: 55_000 });
    },
  );

  it('accepts every body the contract allows', () => {
    const entity = fc.record({ id: validId, features: validFeatures }, { requiredKeys: ['id'] });
    const validBody = fc.record(
      {
        user: entity,
        context: validFeatures,
        candidates: fc.uniqueArray(entity, { minLength: 1, maxLength: MAX, selector: (c) => c.id }),
        topK: fc.integer({ min: 1 }),
        timeoutMs: fc.integer({ min: 1, max: 60_000 }),
      },
      { requiredKeys: ['user', 'candidates'] },
    );
    fc.assert(
      fc.property(validBody, (value) => validateRankRequest(value, MAX) === value),
      { numRuns: 20_000 },
    );
  });
});
