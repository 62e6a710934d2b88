import { RankerError, RequestInvalidError } from '@app/common';
import { validateRankRequest } from '@app/pipeline';
import fc from 'fast-check';
import { parseRankMessage } from './rank-message';

const MAX = 50;
const body = {
  user: { id: 'u1' },
  context: { hour: 20 },
  candidates: [{ id: 'i1' }, { id: 'i2', features: { price: 9.5 } }],
  topK: 1,
};
const value = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v));
const headers = (h: Record<string, string>) =>
  Object.fromEntries(Object.entries(h).map(([k, v]) => [k, Buffer.from(v)]));

function refused(parsed: ReturnType<typeof parseRankMessage>) {
  if (parsed.ok) throw new Error('expected a refusal');
  return parsed;
}

describe('parseRankMessage', () => {
  it('takes requestId and scene from the value and the rest as the REST body', () => {
    expect(parseRankMessage(value({ requestId: 'r1', scene: 'feed', ...body }), {}, MAX)).toEqual({
      ok: true,
      requestId: 'r1',
      scene: 'feed',
      request: body,
    });
  });

  it('takes them from the x-request-id and x-scene headers instead', () => {
    const parsed = parseRankMessage(
      value(body),
      headers({ 'x-request-id': 'r2', 'x-scene': 'feed' }),
      MAX,
    );
    expect(parsed).toEqual({ ok: true, requestId: 'r2', scene: 'feed', request: body });
  });

  it('reads a null header (other clients send them) as absent, and a repeated one by its last value', () => {
    const withNull = {
      'x-request-id': null,
      'x-scene': [Buffer.from('other'), Buffer.from('feed')],
    };
    const parsed = parseRankMessage(
      value({ requestId: 'r3', ...body }),
      withNull as unknown as Parameters<typeof parseRankMessage>[1],
      MAX,
    );
    expect(parsed).toEqual({ ok: true, requestId: 'r3', scene: 'feed', request: body });
  });

  it('answers the value’s requestId when the x-request-id header beside it is bad', () => {
    for (const bad of ['', 'h'.repeat(257)]) {
      const parsed = refused(
        parseRankMessage(
          value({ requestId: 'r4', scene: 'feed', ...body }),
          headers({ 'x-request-id': bad }),
          MAX,
        ),
      );
      expect(parsed.requestId).toBe('r4');
      expect(parsed.error.details).toEqual([
        {
          path: 'headers.x-request-id',
          message: 'must be a non-empty string of at most 256 characters',
        },
      ]);
    }
  });

  it('accepts both places when they agree and refuses them when they differ', () => {
    const same = parseRankMessage(
      value({ requestId: 'r3', scene: 'feed', ...body }),
      headers({ 'x-request-id': 'r3' }),
      MAX,
    );
    expect(same.ok).toBe(true);
    const differ = refused(
      parseRankMessage(
        value({ requestId: 'r3', scene: 'feed', ...body }),
        headers({ 'x-scene': 'news' }),
        MAX,
      ),
    );
    expect(differ.kind).toBe('invalid_request');
    expect(differ.requestId).toBe('r3');
    expect(differ.error.details).toEqual([
      { path: 'scene', message: 'differs from the x-scene header ("news")' },
    ]);
  });

  it.each([
    [null, 'empty message value'],
    [Buffer.alloc(0), 'empty message value'],
  ])('refuses an empty value (%p) as malformed', (v, reason) => {
    const parsed = refused(parseRankMessage(v, headers({ 'x-request-id': 'r4' }), MAX));
    expect(parsed).toMatchObject({ kind: 'empty_value', reason, requestId: 'r4' });
    expect(parsed.error.code).toBe('MALFORMED_JSON');
    expect(parsed.error.details).toEqual([{ path: 'body', message: 'the message value is empty' }]);
  });

  it('refuses a value that is not JSON with the parser message, without a requestId to answer', () => {
    const parsed = refused(parseRankMessage(value('{"requestId":"r5",'), {}, MAX));
    expect(parsed.kind).toBe('not_json');
    expect(parsed.reason).toMatch(/^not JSON \(.+\)$/);
    expect(parsed.error).toMatchObject({ code: 'MALFORMED_JSON', status: 400 });
    expect(parsed.requestId).toBeUndefined();
  });

  it('reports a bad body with the same paths as the HTTP edge, and the requestId to answer', () => {
    const bad = { user: { id: '' }, candidates: [{ id: 'a' }, { id: 'a' }], topk: 3 };
    const parsed = refused(
      parseRankMessage(value({ requestId: 'r6', scene: 'feed', ...bad }), {}, MAX),
    );
    let http: RequestInvalidError | undefined;
    try {
      validateRankRequest(bad, MAX);
    } catch (error) {
      http = error as RequestInvalidError;
    }
    expect(parsed.kind).toBe('invalid_request');
    expect(parsed.requestId).toBe('r6');
    expect(parsed.error.details).toEqual(http!.details);
    expect(parsed.reason).toBe(http!.message);
  });

  it('reports envelope and body problems together', () => {
    const parsed = refused(parseRankMessage(value({ requestId: 7, user: {} }), {}, MAX));
    expect(parsed.error.details.map((d) => d.path)).toEqual([
      'requestId',
      'scene',
      'user.id',
      'candidates',
    ]);
    expect(parsed.requestId).toBeUndefined();
  });

  it.each([
    [{ requestId: '', scene: 'feed' }, 'requestId'],
    [{ requestId: 'x'.repeat(257), scene: 'feed' }, 'requestId'],
    [{ requestId: 'r', scene: 'x'.repeat(101) }, 'scene'],
    [{ requestId: 'r', scene: null }, 'scene'],
  ])('refuses a bad envelope %p at its path', (envelope, path) => {
    const parsed = refused(parseRankMessage(value({ ...envelope, ...body }), {}, MAX));
    expect(parsed.error.details).toEqual([{ path, message: expect.any(String) }]);
  });

  it('refuses a body that is no object, answering the header requestId', () => {
    const parsed = refused(
      parseRankMessage(value([1, 2]), headers({ 'x-request-id': 'r8', 'x-scene': 'feed' }), MAX),
    );
    expect(parsed).toMatchObject({ kind: 'invalid_request', requestId: 'r8' });
    expect(parsed.error.details).toEqual([{ path: 'body', message: 'must be a JSON object' }]);
  });

  it('accepts exactly what the HTTP edge accepts, with the same details (fast-check)', () => {
    const member = fc.oneof(
      fc.constantFrom('user', 'candidates', 'topK', 'timeoutMs', 'context', '__proto__', 'x'),
      fc.string(),
    );
    const bodies = fc.oneof(
      fc.constant(body),
      fc.record({
        user: fc.oneof(fc.constant({ id: 'u1' }), fc.jsonValue()),
        candidates: fc.oneof(fc.constant([{ id: 'a' }]), fc.jsonValue()),
      }),
      fc.dictionary(member, fc.jsonValue(), { maxKeys: 5 }),
    );
    fc.assert(
      fc.property(bodies, (b) => {
        const text = JSON.stringify(b);
        let expected: RankerError | undefined;
        try {
          validateRankRequest(JSON.parse(text), MAX);
        } catch (error) {
          expected = error as RankerError;
        }
        const envelope = JSON.stringify({ requestId: 'r', scene: 'feed' }).slice(0, -1);
        const rest = text.slice(1);
        const wrapped = rest === '}' ? `${envelope}}` : `${envelope},${rest}`;
        const parsed = parseRankMessage(Buffer.from(wrapped), {}, MAX);
        if (expected === undefined) return parsed.ok;
        return (
          !parsed.ok && JSON.stringify(parsed.error.details) === JSON.stringify(expected.details)
        );
      }),
      { seed: 10, numRuns: 2000 },
    );
  });
});
