import { RequestInvalidError } from '@app/common';
import { validateRankRequest } from './rank-request-validation';

function problemsOf(body: unknown): string[] {
  try {
    validateRankRequest(body, 5);
  } catch (error) {
    expect(error).toBeInstanceOf(RequestInvalidError);
    return (error as RequestInvalidError).details.map((d) => d.path ?? '');
  }
  throw new Error('expected validateRankRequest to throw');
}

describe('validateRankRequest', () => {
  it('returns the typed request for a valid body', () => {
    const body = {
      user: { id: 'u1' },
      context: { hour: 3 },
      candidates: [{ id: 'a' }],
      topK: 1,
      timeoutMs: 50,
    };
    expect(validateRankRequest(body, 5)).toMatchObject(body);
  });

  it('refuses a body that is not an object at path body', () => {
    expect(problemsOf([{ user: { id: 'u1' } }])).toEqual(['body']);
    expect(problemsOf('text')).toEqual(['body']);
    expect(problemsOf(null)).toEqual(['body']);
  });

  it('reports DTO and candidate problems together', () => {
    const paths = problemsOf({
      user: { id: '' },
      topK: 0,
      candidates: [{ id: 'a' }, { id: 'a' }],
      extra: true,
    });
    expect(paths).toEqual(expect.arrayContaining(['user.id', 'topK', 'extra', 'candidates[1].id']));
  });

  it('applies the candidate limit', () => {
    const candidates = Array.from({ length: 6 }, (_, i) => ({ id: `i${i}` }));
    expect(problemsOf({ user: { id: 'u1' }, candidates })).toEqual(['candidates']);
  });
});
