import { RequestInvalidError } from '@app/common';
import { candidateProblems } from './rank-request-check';
import { validateRankRequest } from './rank-request-validation';
import { RankRequest } from './rank-request';

const request = (...ids: string[]): RankRequest => ({
  user: { id: 'u1' },
  candidates: ids.map((id) => ({ id })),
});

const check = (req: RankRequest, max: number) => validateRankRequest(req, max);

/** The error validateRankRequest throws; fails the test if it does not throw. */
function errorOf(req: RankRequest, max: number): RequestInvalidError {
  try {
    check(req, max);
  } catch (error) {
    expect(error).toBeInstanceOf(RequestInvalidError);
    return error as RequestInvalidError;
  }
  throw new Error('expected validateRankRequest to throw');
}

describe('validateRankRequest: the candidate list', () => {
  it('accepts distinct ids up to the limit', () => {
    expect(() => check(request('a', 'b', 'c'), 3)).not.toThrow();
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
    expect(() => check(request('a', 'A', 'a '), 10)).not.toThrow();
  });

  it('lists at most 50 problems', () => {
    const error = errorOf(request(...Array.from({ length: 100 }, () => 'same')), 200);
    expect(error.details).toHaveLength(50);
    expect(error.details[0].path).toBe('candidates[1].id');
    expect(error.details[49].path).toBe('candidates[50].id');
  });
});

describe('candidateProblems', () => {
  it('has nothing to report for a valid list', () => {
    expect(
      candidateProblems([{ id: 'a' }, { id: 'b', features: { price: 3, promo: true } }], 10),
    ).toEqual([]);
  });

  it.each([
    ['not an array', { id: 'a' }, 'candidates'],
    ['missing', undefined, 'candidates'],
    ['empty', [], 'candidates'],
  ])('rejects a list that is %s at path candidates', (_name, list, path) => {
    expect(candidateProblems(list, 10).map((d) => d.path)).toEqual([path]);
  });

  it('names every bad entry with its own index and field', () => {
    const problems = candidateProblems(
      [
        { id: 7 },
        { id: 'ok' },
        { id: 'x', features: { tags: ['a'] } },
        5,
        { id: '' },
        { id: 'y', extra: 1 },
      ],
      10,
    );
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
    expect(candidateProblems([{ id: 'x'.repeat(257) }], 10).map((d) => d.path)).toEqual([
      'candidates[0].id',
    ]);
  });
});
