/**
 * fast-check generators of values that break a traffic config's rule wherever they land: wrong
 * types, NaN-like strings, non-finite and huge numbers, numbers off their range or the 0.01 grid,
 * versions the scene lacks, names and salts that cannot be, deep nesting, long strings. Values
 * JSON cannot hold as such (1e999, 30-digit integers, nesting too deep to build as objects) go in
 * as raw text, put in place by toJson.
 */
import { SPEC_VERSIONS } from '@app/pipeline/testing';
import fc from 'fast-check';

// ---- raw JSON text inside a value: a marker string replaced after JSON.stringify ----

const raws: string[] = [];
/** A marker for `text`, put in its place by toJson. */
export const raw = (text: string): string => {
  raws.push(text);
  return `\u0000raw:${raws.length - 1}\u0000`;
};
/** JSON.stringify with the raw markers replaced by their text. */
export function toJson(value: unknown): string {
  return JSON.stringify(value).replace(/"\\u0000raw:(\d+)\\u0000"/g, (_, i) => raws[Number(i)]);
}

// ---- values that break a rule whatever config they land in ----

export const deep = fc
  .tuple(fc.integer({ min: 1_000, max: 20_000 }), fc.boolean())
  .map(([levels, asObject]) =>
    asObject
      ? raw('{"a":'.repeat(levels / 4) + '1' + '}'.repeat(levels / 4))
      : raw('['.repeat(levels) + ']'.repeat(levels)),
  );
export const notScalar = fc.oneof(
  fc.constantFrom<unknown>(null, true, false, [], {}, [1], { a: 1 }, [null], [[]]),
  deep,
);
export const nanLike = fc.constantFrom(
  'NaN',
  'Infinity',
  '-Infinity',
  '1e999',
  '0x10',
  '',
  ' 5',
  '5%',
  '5',
  '١٢',
  'null',
);
const nonFinite = fc.constantFrom(raw('1e999'), raw('-1e999'));
export const longString = (min: number) => fc.string({ minLength: min, maxLength: min + 4_000 });
/** Not a number at all. */
export const notNumber = fc.oneof(notScalar, nanLike, nonFinite, longString(300));
/** Not a string at all. */
export const notString = fc.oneof(
  notScalar,
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  nonFinite,
  fc.constantFrom(raw('123456789012345678901234567890'), raw('-0')),
);

export const PROTO = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  '__defineGetter__',
];
export const badVersion = fc.oneof(
  notString,
  fc.constantFrom('v9', 'V1', ' v1', 'v1 ', '', 'v1\u0000', '../v1', 'v1/..', '%76%31', 'v01'),
  fc.constantFrom(...PROTO),
  longString(300),
  fc.string({ maxLength: 8 }).filter((s) => !SPEC_VERSIONS.includes(s)),
);
export const badName = fc.oneof(
  notString,
  fc.constantFrom('', '-a', '.a', '_a', 'a b', 'a/b', 'é', 'a\n', '\u0000', '__proto__'),
  longString(65).map((s) => `a${s}`),
);
export const badSalt = fc.oneof(notString, fc.constant(''), longString(257));
/** 0-100 in steps of 0.01 breaks; so does `extra`. */
export const badPercent = (...extra: number[]) =>
  fc.oneof(
    notNumber,
    fc.constantFrom(-0.01, -1, 100.01, 101, 5.001, 0.005, 1e-7, 33.333, 1e308, -1e308, ...extra),
    fc.double({ min: -1e6, max: -0.001, noNaN: true }),
    fc.integer({ min: 101 }),
    fc.constantFrom(raw('123456789012345678901234567890')),
  );
export const badInt = (below: number, above: number) =>
  fc.oneof(notNumber, fc.constantFrom(below, above, 1.5, -1, 1e308, -1e308, 10.5));
export const badRatio = fc.oneof(notNumber, fc.constantFrom(0.99, 0.5, 0, -1, -1e308));
export const badDelta = fc.oneof(notNumber, fc.constantFrom(-0.01, 1.01, 2, 1e308, -1e308));
export const anyValue = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: notScalar },
  { weight: 1, arbitrary: longString(1_000) },
);
