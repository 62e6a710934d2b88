import fc from 'fast-check';
import { fastParse, isScannedList } from './rank-body-json';
import { validateRankRequest } from './rank-request-validation';

/** What the body parser gives: fastParse's value, else JSON.parse's (value or error). */
function parsed(text: string): { value: unknown } | { error: true } {
  const fast = fastParse(text);
  if (fast !== undefined) return fast;
  try {
    return { value: JSON.parse(text) };
  } catch {
    return { error: true };
  }
}

function reference(text: string): { value: unknown } | { error: true } {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return { error: true };
  }
}

const ids = fc.array(fc.string({ maxLength: 12 }), { maxLength: 8 });
const space = fc.constantFrom('', ' ', '\n', '\t ', '\r\n  ');

/** A rank-like body, whitespace anywhere, ids of any characters (escaped as JSON escapes them). */
const rankText = fc
  .record({
    ids,
    before: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), {
      maxKeys: 3,
    }),
    after: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), {
      maxKeys: 3,
    }),
    s: fc.array(space, { minLength: 8, maxLength: 8 }),
  })
  .map(({ ids, before, after, s }) => {
    const members = (o: object) =>
      Object.entries(o).map(([k, v]) => `${JSON.stringify(k)}:${s[0]}${JSON.stringify(v)}`);
    const candidates = ids
      .map((id) => `{${s[1]}"id"${s[2]}:${s[3]}${JSON.stringify(id)}${s[4]}}`)
      .join(`${s[5]},${s[6]}`);
    const all = [
      ...members(before),
      `"candidates"${s[7]}:[${s[1]}${candidates}${s[2]}]`,
      ...members(after),
    ];
    return `${s[0]}{${all.join(`,${s[3]}`)}}${s[4]}`;
  });

/** One character of `text` replaced, removed or inserted at a random place: mostly broken JSON. */
const mutated = fc
  .tuple(rankText, fc.nat(), fc.constantFrom(...'{}[]":,\\ a0\u0001'), fc.nat(2))
  .map(([text, at, c, how]) => {
    const i = at % (text.length + 1);
    if (how === 0) return text.slice(0, i) + c + text.slice(i + 1);
    if (how === 1) return text.slice(0, i) + text.slice(i + 1);
    return text.slice(0, i) + c + text.slice(i);
  });

/**
 * Members that look like candidates to a careless scanner (inside strings, nested, escaped),
 * joined into an object, with junk spliced in somewhere: about one in twenty is still a body the
 * fast path takes, the rest are JSON.parse's to refuse or read.
 */
const tricky = fc
  .tuple(
    fc.array(
      fc.constantFrom(
        '"candidates":[{"id":"x"},{"id":"y"}]',
        '"candidates":[]',
        '"candidates":[{"id":"a\\"b"}]',
        '"user":{"id":"u","candidates":[1]}',
        '"a":"candidates"',
        '"a":["candidates",{"candidates":[{"id":"z"}]}]',
        '"c\\u0061ndidates":[{"id":"q"}]',
        '"b":"\\"candidates\\":[{\\"id\\":\\"w\\"}]"',
        '"candidates" : [ { "id" : "s" } ]',
        '"k":1',
      ),
      { maxLength: 4 },
    ),
    fc.array(fc.constantFrom('', '', ',', '}', ']', '"', '\\', ' ', '{', '[', ':', 'x'), {
      maxLength: 3,
    }),
    fc.nat(),
  )
  .map(([members, junk, at]) => {
    const text = `{${members.join(',')}}`;
    const i = at % (text.length + 1);
    return text.slice(0, i) + junk.join('') + text.slice(i);
  });

describe('fastParse (the rank body fast path)', () => {
  it('reads a rank body as JSON.parse does, and takes the fast path for it', () => {
    const text = JSON.stringify({
      user: { id: 'u1' },
      candidates: [{ id: 'i1' }, { id: 'i2' }],
      topK: 1,
    });
    const fast = fastParse(text);
    expect(fast).toBeDefined();
    expect(fast!.value).toEqual(JSON.parse(text));
    expect(Object.keys(fast!.value as object)).toEqual(['user', 'candidates', 'topK']);
  });

  it.each([
    ['more candidates than the array made at once', 20_000, 0],
    ['few candidates before a large field', 3, 200_000],
    ['no candidates before a large field', 0, 50_000],
  ])('reads %s exactly', (_name, count, padding) => {
    const body = {
      candidates: Array.from({ length: count }, (_, i) => ({ id: `i${i}` })),
      context: { note: 'x'.repeat(padding) },
    };
    const text = JSON.stringify(body);
    const fast = fastParse(text);
    expect(fast).toBeDefined();
    expect(fast!.value).toEqual(body);
    expect((fast!.value as typeof body).candidates).toHaveLength(count);
  });

  it.each([
    ['candidates with features', '{"candidates":[{"id":"a","features":{"x":1}}]}'],
    ['an escaped id', '{"candidates":[{"id":"a\\"b"}]}'],
    ['a control character in an id', '{"candidates":[{"id":"a\u0001"}]}'],
    ['a number id', '{"candidates":[{"id":1}]}'],
    ['candidates twice', '{"candidates":[{"id":"a"}],"candidates":[{"id":"b"}]}'],
    ['an escaped key', '{"candid\\u0061tes":[{"id":"a"}],"candidates":[{"id":"b"}]}'],
    ['candidates not an array', '{"candidates":"a"}'],
    ['a top-level array', '[{"candidates":[{"id":"a"}]}]'],
    ['no candidates', '{"user":{"id":"u"}}'],
  ])('leaves %s to JSON.parse', (_name, text) => {
    expect(fastParse(text)).toBeUndefined();
  });

  it('never gives a value for text JSON.parse refuses', () => {
    for (const text of [
      '{"candidates":[{"id":"a"}]',
      '{"candidates":[{"id":"a"}]}}',
      '{"candidates":[{"id":"a"},]}',
      '{"a":1,,"candidates":[{"id":"a"}]}',
      '{"candidates":[{"id":"a"}]} x',
      '{"a":"x, "candidates":[{"id":"a"}]}',
    ])
      expect(parsed(text)).toEqual(reference(text));
  });

  it('matches JSON.parse on generated rank bodies (property)', () => {
    fc.assert(
      fc.property(rankText, (text) => {
        expect(parsed(text)).toEqual(reference(text));
      }),
      { numRuns: 500 },
    );
  });

  it('takes the fast path for ids without escapes, whatever the whitespace (property)', () => {
    const plain = fc.array(fc.stringMatching(/^[\w.:@\u00e9\u4e2d -]{0,12}$/), { maxLength: 20 });
    fc.assert(
      fc.property(plain, space, (list, s) => {
        const text = `{${s}"user":{"id":"u"},${s}"candidates"${s}:${s}[${list
          .map((id) => `${s}{${s}"id"${s}:${s}"${id}"${s}}${s}`)
          .join(',')}]${s}}`;
        const fast = fastParse(text);
        expect(fast).toBeDefined();
        expect(fast!.value).toEqual(JSON.parse(text));
      }),
      { numRuns: 300 },
    );
  });

  it('matches JSON.parse on mutated bodies and on any JSON text (property)', () => {
    fc.assert(
      fc.property(fc.oneof(mutated, tricky, fc.json({ maxDepth: 3 }), fc.string()), (text) => {
        expect(parsed(text)).toEqual(reference(text));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('validation of a candidate list the fast path made', () => {
  /** What validateRankRequest says of `body`: the request, or its error's details. */
  const outcome = (body: unknown) => {
    try {
      return { ok: validateRankRequest(body, 64) };
    } catch (error) {
      return { details: (error as { details: unknown }).details };
    }
  };

  it('says what it says of the same list from JSON.parse: lengths, repeats, limit (property)', () => {
    const id = fc.oneof(
      fc.constantFrom('', 'a', 'b', 'x'.repeat(256), 'x'.repeat(257)),
      fc.string({ maxLength: 6 }),
    );
    fc.assert(
      fc.property(fc.array(id, { maxLength: 70 }), (list) => {
        const text = JSON.stringify({
          user: { id: 'u' },
          candidates: list.map((i) => ({ id: i })),
        });
        const fast = fastParse(text);
        // Ids the scanner reads as they are (no escape, no control character): its own list.
        const plain = (i: string) => [...i].every((c) => c !== '\\' && c !== '"' && c >= ' ');
        if (list.every(plain)) {
          expect(isScannedList((fast!.value as { candidates: unknown[] }).candidates)).toBe(true);
        }
        expect(outcome(fast?.value ?? JSON.parse(text))).toEqual(outcome(JSON.parse(text)));
      }),
      { numRuns: 500 },
    );
  });

  it('is not taken for a list JSON.parse made, nor for one built by hand', () => {
    expect(isScannedList(JSON.parse('[{"id":"a"}]'))).toBe(false);
    expect(isScannedList([{ id: 'a' }])).toBe(false);
  });
});
