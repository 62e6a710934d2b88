import { RequestInvalidError } from '@app/common';
import { validateRankRequest } from './rank-request-validation';

/** The error validateRankRequest throws; fails the test if it does not throw. */
function errorOf(body: unknown, max = 5): RequestInvalidError {
  try {
    validateRankRequest(body, max);
  } catch (error) {
    expect(error).toBeInstanceOf(RequestInvalidError);
    return error as RequestInvalidError;
  }
  throw new Error('expected validateRankRequest to throw');
}

const problemsOf = (body: unknown, max = 5) => errorOf(body, max).details.map((d) => d.path);

/** A valid body but for its candidate list. */
const withCandidates = (candidates: unknown) => ({ user: { id: 'u1' }, candidates });
const request = (...ids: string[]) => withCandidates(ids.map((id) => ({ id })));
const candidateDetails = (candidates: unknown, max = 10) =>
  errorOf(withCandidates(candidates), max).details;

describe('validateRankRequest', () => {
  it('returns the typed request for a valid body', () => {
    const body = {
      user: { id: 'u1', features: { age: 30 } },
      context: { hour: 3 },
      candidates: [{ id: 'a' }, { id: 'b', features: { price: 3, promo: true } }],
      topK: 1,
      timeoutMs: 50,
    };
    expect(validateRankRequest(body, 5)).toEqual(body);
  });

  it('refuses a body that is not an object at path body', () => {
    expect(problemsOf([{ user: { id: 'u1' } }])).toEqual(['body']);
    expect(problemsOf('text')).toEqual(['body']);
    expect(problemsOf(null)).toEqual(['body']);
    expect(problemsOf(undefined)).toEqual(['body']);
  });

  it('reports problems of every field together', () => {
    const paths = problemsOf({
      user: { id: '' },
      topK: 0,
      candidates: [{ id: 'a' }, { id: 'a' }],
      extra: true,
    });
    expect(paths).toEqual(expect.arrayContaining(['user.id', 'topK', 'extra', 'candidates[1].id']));
  });

  it('names nested object fields with a dot', () => {
    expect(errorOf({ ...request('a'), user: { id: '' } }).details).toEqual([
      { path: 'user.id', message: 'must be a non-empty string of at most 256 characters' },
    ]);
  });

  it('names top-level fields plainly', () => {
    expect(problemsOf({ ...request('a'), topK: 0, context: 'morning' }).sort()).toEqual([
      'context',
      'topK',
    ]);
  });

  // Found from outside: these were accepted (ranked without a user id) or answered 500.
  it.each([
    ['an empty array as user', { user: [] }, 'user'],
    ['an array of users', { user: [{ id: 'u1' }] }, 'user'],
    ['a null user', { user: null }, 'user'],
    ['a top-level constructor', { user: { id: 'u1' }, constructor: 1 }, 'constructor'],
    ['a top-level toString', { user: { id: 'u1' }, toString: 'x' }, 'toString'],
    ['a user constructor', { user: { id: 'u1', constructor: 1 } }, 'user.constructor'],
    ['an odd top-level name', { user: { id: 'u1' }, 'a b': 1 }, 'body["a b"]'],
    ['an empty top-level name', { user: { id: 'u1' }, '': 1 }, 'body[""]'],
    ['a null context', { user: { id: 'u1' }, context: null }, 'context'],
    ['null user features', { user: { id: 'u1', features: null } }, 'user.features'],
    ['a null topK', { user: { id: 'u1' }, topK: null }, 'topK'],
    ['a requestId from outside', { user: { id: 'u1' }, requestId: 'r' }, 'requestId'],
    ['a timeoutMs over a minute', { user: { id: 'u1' }, timeoutMs: 60_001 }, 'timeoutMs'],
  ])('refuses %s at its path', (_name, fields, path) => {
    expect(problemsOf({ candidates: [{ id: 'a' }], ...fields })).toEqual([path]);
  });

  it('refuses a JSON __proto__ field as unknown, at its path', () => {
    expect(
      problemsOf(JSON.parse('{"user":{"id":"u1"},"candidates":[{"id":"a"}],"__proto__":{}}')),
    ).toEqual(['__proto__']);
  });

  it('takes prototype names as ordinary feature names, never as prototype members', () => {
    const features = JSON.parse(
      '{"constructor":1,"toString":"x","__proto__":true,"hasOwnProperty":2}',
    );
    const body = {
      user: { id: 'u1', features },
      context: features,
      candidates: [{ id: 'a', features }],
    };
    expect(validateRankRequest(body, 5)).toBe(body);
    const bad = JSON.parse('{"constructor":{"prototype":{}}}');
    expect(errorOf({ ...body, context: bad }).details).toEqual([
      {
        path: 'context',
        message: 'context .constructor must be a string, finite number or boolean',
      },
    ]);
  });

  it('refuses a deeply nested value at its path without descending into it', () => {
    const deep = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000));
    expect(
      problemsOf({
        user: { id: 'u1', features: { a: deep } },
        context: deep,
        x: deep,
        candidates: [{ id: 'a', features: deep }],
      }),
    ).toEqual(['user.features', 'context', 'x', 'candidates[0].features']);
  });

  it('shortens a long odd name in its path', () => {
    const [path] = problemsOf({ ...request('a'), ['k'.repeat(10_000)]: 1 });
    expect(path).toBe(`body["${'k'.repeat(64)}…"]`);
  });
});

describe('validateRankRequest: the candidate list', () => {
  it('accepts distinct ids up to the limit', () => {
    expect(() => validateRankRequest(request('a', 'b', 'c'), 3)).not.toThrow();
  });

  it('rejects more candidates than the limit, at path candidates', () => {
    const error = errorOf(request('a', 'b', 'c', 'd'), 3);
    expect(error.message).toBe(
      'invalid request: candidates: at most 3 candidates per request, got 4',
    );
    expect(error).toMatchObject({ code: 'REQUEST_INVALID', status: 400 });
    expect(error.details).toEqual([
      { path: 'candidates', message: 'at most 3 candidates per request, got 4' },
    ]);
  });

  it('applies the candidate limit', () => {
    const candidates = Array.from({ length: 6 }, (_, i) => ({ id: `i${i}` }));
    expect(problemsOf({ user: { id: 'u1' }, candidates })).toEqual(['candidates']);
  });

  it('checks the limit before looking for duplicates', () => {
    const error = errorOf(request('a', 'a', 'a'), 2);
    expect(error.details.map((d) => d.path)).toEqual(['candidates']);
  });

  it('rejects a duplicate id at its index, naming the first one', () => {
    const error = errorOf(request('a', 'b', 'c', 'b'), 10);
    expect(error.message).toContain("candidates[3].id: duplicate id 'b'");
    expect(error.details).toEqual([
      { path: 'candidates[3].id', message: "duplicate id 'b' (first at candidates[1])" },
    ]);
  });

  it('reports every duplicate, each against the first occurrence', () => {
    const error = errorOf(request('a', 'b', 'a', 'c', 'b', 'a'), 10);
    expect(error.details).toEqual([
      { path: 'candidates[2].id', message: "duplicate id 'a' (first at candidates[0])" },
      { path: 'candidates[4].id', message: "duplicate id 'b' (first at candidates[1])" },
      { path: 'candidates[5].id', message: "duplicate id 'a' (first at candidates[0])" },
    ]);
  });

  it('treats ids as case-sensitive strings', () => {
    expect(() => validateRankRequest(request('a', 'A', 'a '), 10)).not.toThrow();
  });

  it('lists at most 50 problems', () => {
    const error = errorOf(request(...Array.from({ length: 100 }, () => 'same')), 200);
    expect(error.details).toHaveLength(50);
    expect(error.details[0].path).toBe('candidates[1].id');
    expect(error.details[49].path).toBe('candidates[50].id');
  });

  it.each([
    ['not an array', { id: 'a' }],
    ['empty', []],
  ])('rejects a list that is %s at path candidates', (_name, list) => {
    expect(candidateDetails(list).map((d) => d.path)).toEqual(['candidates']);
  });

  it('rejects a missing list at path candidates', () => {
    expect(problemsOf({ user: { id: 'u1' } })).toEqual(['candidates']);
  });

  it('names every bad entry with its own index and field', () => {
    const problems = candidateDetails([
      { id: 7 },
      { id: 'ok' },
      { id: 'x', features: { tags: ['a'] } },
      5,
      { id: '' },
      { id: 'y', extra: 1 },
    ]);
    expect(problems).toEqual([
      { path: 'candidates[0].id', message: 'must be a non-empty string of at most 256 characters' },
      {
        path: 'candidates[2].features',
        message: 'features .tags must be a string, finite number or boolean',
      },
      { path: 'candidates[3]', message: 'must be an object { id, features? }' },
      { path: 'candidates[4].id', message: 'must be a non-empty string of at most 256 characters' },
      { path: 'candidates[5].extra', message: 'property should not exist' },
    ]);
  });

  it('rejects an id longer than 256 characters', () => {
    expect(candidateDetails([{ id: 'x'.repeat(257) }]).map((d) => d.path)).toEqual([
      'candidates[0].id',
    ]);
  });
});
