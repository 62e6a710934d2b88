import { RankerClient } from './ranker-client';

/**
 * Every caller mistake gets a 4xx with `{ code, message, details }` naming the problem; the
 * service keeps serving afterwards.
 */
describe('rank API: bad input', () => {
  let ranker: RankerClient;
  const ok = { user: { id: 'u1' }, candidates: [{ id: 'i1' }, { id: 'i2' }] };

  beforeAll(async () => {
    ranker = await RankerClient.start({ RANK_MAX_CANDIDATES: '10', BODY_LIMIT_BYTES: '4096' });
  });
  afterAll(() => ranker.close());

  const cases: [string, unknown, number, string, string][] = [
    ['malformed JSON', '{"user": {"id": "u1"}, "candidates": [', 400, 'MALFORMED_JSON', 'body'],
    ['an empty body', '', 400, 'MALFORMED_JSON', 'body'],
    ['a missing user', { candidates: [{ id: 'i1' }] }, 400, 'REQUEST_INVALID', 'user'],
    [
      'a missing user id',
      { user: {}, candidates: [{ id: 'i1' }] },
      400,
      'REQUEST_INVALID',
      'user.id',
    ],
    [
      'a numeric user id',
      { user: { id: 7 }, candidates: [{ id: 'i1' }] },
      400,
      'REQUEST_INVALID',
      'user.id',
    ],
    [
      'empty candidates',
      { user: { id: 'u1' }, candidates: [] },
      400,
      'REQUEST_INVALID',
      'candidates',
    ],
    [
      'non-array candidates',
      { user: { id: 'u1' }, candidates: { id: 'i1' } },
      400,
      'REQUEST_INVALID',
      'candidates',
    ],
    ['missing candidates', { user: { id: 'u1' } }, 400, 'REQUEST_INVALID', 'candidates'],
    [
      'a candidate without id',
      { user: { id: 'u1' }, candidates: [{ id: 'i1' }, {}] },
      400,
      'REQUEST_INVALID',
      'candidates[1].id',
    ],
    [
      'a candidate that is not an object',
      { user: { id: 'u1' }, candidates: [{ id: 'i1' }, 5] },
      400,
      'REQUEST_INVALID',
      'candidates[1]',
    ],
    [
      'duplicate candidate ids',
      { user: { id: 'u1' }, candidates: [{ id: 'a' }, { id: 'b' }, { id: 'a' }] },
      400,
      'REQUEST_INVALID',
      'candidates[2].id',
    ],
    [
      'more candidates than the limit',
      { user: { id: 'u1' }, candidates: Array.from({ length: 11 }, (_, i) => ({ id: `i${i}` })) },
      400,
      'REQUEST_INVALID',
      'candidates',
    ],
    [
      'a feature of a nested type',
      { user: { id: 'u1', features: { age: { years: 3 } } }, candidates: [{ id: 'i1' }] },
      400,
      'REQUEST_INVALID',
      'user.features',
    ],
    [
      'a non-finite feature',
      { user: { id: 'u1' }, context: { hour: null }, candidates: [{ id: 'i1' }] },
      400,
      'REQUEST_INVALID',
      'context',
    ],
    ['a zero topK', { ...ok, topK: 0 }, 400, 'REQUEST_INVALID', 'topK'],
    ['a fractional timeoutMs', { ...ok, timeoutMs: 2.5 }, 400, 'REQUEST_INVALID', 'timeoutMs'],
    ['an unknown field', { ...ok, topk: 3 }, 400, 'REQUEST_INVALID', 'topk'],
    ['a JSON array body', [ok], 400, 'REQUEST_INVALID', 'body'],
  ];

  it.each(cases)('%s gets a 4xx naming the problem', async (_name, body, status, code, path) => {
    const reply = await ranker.rank('feed', body);
    expect(reply.status).toBe(status);
    expect(reply.body.code).toBe(code);
    expect(typeof reply.body.message).toBe('string');
    expect(reply.body.details.map((d: { path: string }) => d.path)).toContain(path);
    expect(reply.body.requestId).toBe(reply.headers.get('x-request-id'));
  });

  it('an unknown scene gets 404 naming the scene', async () => {
    const reply = await ranker.rank('no-such-scene', ok);
    expect(reply.status).toBe(404);
    expect(reply.body.code).toBe('SCENE_NOT_FOUND');
    expect(reply.body.message).toContain('no-such-scene');
  });

  it('a body over BODY_LIMIT_BYTES gets 413', async () => {
    const big = {
      user: { id: 'u1', features: { note: 'x'.repeat(5000) } },
      candidates: [{ id: 'i1' }],
    };
    const reply = await ranker.rank('feed', big);
    expect(reply.status).toBe(413);
    expect(reply.body.code).toBe('BODY_TOO_LARGE');
    expect(reply.body.details[0].path).toBe('body');
  });

  it('a body that is not JSON gets 415', async () => {
    const reply = await ranker.request('POST', '/v1/scenes/feed/rank', 'user=u1', 'text/plain');
    expect(reply.status).toBe(415);
    expect(reply.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('an unknown route gets a JSON 404', async () => {
    const reply = await ranker.request('GET', '/v1/nothing');
    expect(reply.status).toBe(404);
    expect(reply.body.code).toBe('NOT_FOUND');
  });

  it('keeps serving after all of the above', async () => {
    const reply = await ranker.rank('feed', ok);
    expect(reply.status).toBe(200);
    expect(reply.body.items).toHaveLength(2);
  });
});
