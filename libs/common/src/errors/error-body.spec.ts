import { errorBodyOf, MAX_ERROR_DETAILS } from './error-body';
import { OverloadedError, RequestInvalidError, SceneNotFoundError } from './ranker-error';

describe('errorBodyOf', () => {
  it('gives a typed error its own status, code, message and details', () => {
    expect(errorBodyOf(new SceneNotFoundError('nope'))).toEqual([
      404,
      {
        code: 'SCENE_NOT_FOUND',
        message: "unknown scene 'nope'",
        details: [{ path: 'scene', message: "no bundle is loaded for scene 'nope'" }],
      },
    ]);
    expect(errorBodyOf(new OverloadedError('full'))[0]).toBe(503);
  });

  it('cuts details to MAX_ERROR_DETAILS and keeps the full count', () => {
    const details = Array.from({ length: 250 }, (_, i) => ({ path: `p${i}`, message: 'bad' }));
    const [status, body] = errorBodyOf(new RequestInvalidError('invalid', details));
    expect(status).toBe(400);
    expect(body.details).toEqual(details.slice(0, MAX_ERROR_DETAILS));
    expect(body.detailsTotal).toBe(250);
  });

  it('tells nothing of an unexpected error', () => {
    expect(errorBodyOf(new Error('secret path /etc/x'))).toEqual([
      500,
      { code: 'INTERNAL', message: 'internal error', details: [] },
    ]);
  });
});
