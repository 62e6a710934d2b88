import { RequestInvalidError } from '@app/common';
import { checkRankRequest } from './rank-request-check';
import { RankRequest } from './rank-request';

const request = (...ids: string[]): RankRequest => ({
  user: { id: 'u1' },
  candidates: ids.map((id) => ({ id })),
});

/** The error checkRankRequest throws; fails the test if it does not throw. */
function errorOf(req: RankRequest, max: number): RequestInvalidError {
  try {
    checkRankRequest(req, max);
  } catch (error) {
    expect(error).toBeInstanceOf(RequestInvalidError);
    return error as RequestInvalidError;
  }
  throw new Error('expected checkRankRequest to throw');
}

describe('checkRankRequest', () => {
  it('accepts distinct ids up to the limit', () => {
    expect(() => checkRankRequest(request('a', 'b', 'c'), 3)).not.toThrow();
  });

  it('rejects more candidates than the limit, at path candidates', () => {
    const error = errorOf(request('a', 'b', 'c', 'd'), 3);
    expect(error.message).toBe('too many candidates: 4 > 3');
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
    expect(error.message).toBe('duplicate candidate ids');
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
    expect(() => checkRankRequest(request('a', 'A', 'a '), 10)).not.toThrow();
  });

  it('lists at most 20 duplicates', () => {
    const error = errorOf(request(...Array.from({ length: 50 }, () => 'same')), 100);
    expect(error.details).toHaveLength(20);
    expect(error.details[0].path).toBe('candidates[1].id');
    expect(error.details[19].path).toBe('candidates[20].id');
  });
});
