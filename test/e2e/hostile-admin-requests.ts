/**
 * fast-check generators of hostile calls to the admin API's writes (PUT and DELETE
 * /v1/admin/scenes/:scene/traffic, POST .../rollback and .../reload): poisoned traffic bodies
 * (hostile-traffic-bodies.ts), bodies that are not objects, not JSON, truncated, oversize, empty,
 * of the wrong content type or with invalid UTF-8, well-formed bodies refused all the same (a
 * stale revision, a rollback with no canary), scene names that are not scenes, and forged or
 * malformed Authorization headers. `allowed` says which statuses each may get: never a 5xx, and
 * a 2xx only from a reload, which writes nothing.
 */
import fc from 'fast-check';
import { isJson, NON_JSON_TYPES } from './error-body-check';
import { poisonedBody } from './hostile-traffic-bodies';
import { raw, toJson } from './hostile-values';

export type Route = 'put' | 'delete' | 'rollback' | 'reload';
export const ROUTES: Record<Route, { method: string; tail: string }> = {
  put: { method: 'PUT', tail: '/traffic' },
  delete: { method: 'DELETE', tail: '/traffic' },
  rollback: { method: 'POST', tail: '/rollback' },
  reload: { method: 'POST', tail: '/reload' },
};

export interface Hostile {
  kind: string;
  route: Route;
  scene?: string;
  /** Absent: no body. */
  body?: string | Uint8Array;
  /** `application/json` when absent and there is a body; null sends none. */
  contentType?: string | null;
  /** The admin token when absent; null sends no header. */
  authorization?: string | null;
  /** Paths a refusal must name one of (or a path below or above one). */
  names: string[];
}

const route = fc.constantFrom<Route>('put', 'put', 'put', 'put', 'delete', 'rollback', 'reload');
const notObject = fc.oneof(
  fc
    .jsonValue({ maxDepth: 2 })
    .filter((v) => v === null || typeof v !== 'object' || Array.isArray(v)),
  // Deep nesting, as raw JSON text (toJson puts it in place).
  fc.integer({ min: 1_000, max: 20_000 }).map((n) => raw('['.repeat(n) + ']'.repeat(n))),
);

const forged = (token: string) =>
  fc.oneof(
    fc.constantFrom<string | null>(
      null,
      '',
      'Bearer',
      'Bearer ',
      'bearer',
      `Basic ${Buffer.from(`admin:${token}`).toString('base64')}`,
      `Token ${token}`,
      `Bearer ${token.toUpperCase()}`,
      `Bearer ${token.slice(0, -1)}`,
      `Bearer ${token}x`,
      `Bearer ${token} ${token}`,
      `Bearer ${token},Bearer ${token}`,
      `Bearer "${token}"`,
      `Bearer ${token.slice(0, 8)} ${token.slice(8)}`,
      `${token}`,
      `Bearer ${'\u00e9'.repeat(20)}`,
    ),
    fc
      .string({ minLength: 1, maxLength: 600 })
      .map((s) => `Bearer ${s.replace(/[^\x21-\x7e]/g, 'x')}`),
    fc.string({ unit: 'binary', maxLength: 80 }).map((s) =>
      // Header values are bytes 0x20-0xff (and tab); fetch refuses the rest.
      s.replace(/[^\t\x20-\x7e\x80-\xff]/g, '?'),
    ),
    fc.integer({ min: 4_000, max: 12_000 }).map((n) => `Bearer ${'A'.repeat(n)}`),
  );
const badScene = fc.oneof(
  fc.constantFrom(
    '..',
    '.hidden',
    '-feed',
    'Feed',
    'feed.',
    'no-such-scene',
    '%00',
    '%zz',
    '%2e%2e',
  ),
  fc.string({ minLength: 1, maxLength: 40 }).map((s) => `x${encodeURIComponent(s)}-no-such`),
  fc.integer({ min: 101, max: 600 }).map((n) => `s${'x'.repeat(n)}`),
);

/** Hostile calls to a ranker whose admin token is `token` and body limit `bodyLimit` bytes. */
export const hostileAdminCall = (token: string, bodyLimit: number): fc.Arbitrary<Hostile> =>
  fc.oneof(
    {
      weight: 60,
      arbitrary: fc.tuple(route, poisonedBody).map(([r, b]) => ({
        kind: 'poisoned',
        route: r,
        body: b.text,
        // Where the call takes no config (DELETE, rollback), each of its keys is at fault too.
        names: [...b.names, ...Object.keys(b.config as object)],
      })),
    },
    {
      weight: 6,
      arbitrary: fc.tuple(route, notObject).map(([r, v]) => ({
        kind: 'not-object',
        route: r,
        // Through toJson, as the poisoned bodies: a generated string that starts with `[` is a
        // JSON string, not raw text (told apart by that prefix, FUZZ_SEED=4242 sent `[x^` raw,
        // malformed, to reload, which takes no body and rightly refused it with 400).
        body: toJson(v),
        names: ['body'],
      })),
    },
    {
      weight: 6,
      arbitrary: fc
        .tuple(route, poisonedBody, fc.double({ min: 0, max: 1, noNaN: true }))
        .map(([r, b, at]) => ({
          kind: 'truncated',
          route: r,
          body: b.text.slice(0, Math.floor(b.text.length * at)),
          names: [],
        }))
        .filter((h) => h.body !== '' && !isJson(h.body as string)),
    },
    {
      weight: 5,
      arbitrary: fc
        .tuple(route, poisonedBody, fc.constantFrom<string | null>(...NON_JSON_TYPES, null))
        .map(([r, b, contentType]) => ({
          kind: 'content-type',
          route: r,
          body: b.text,
          contentType,
          names: [],
        })),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(route, fc.integer({ min: bodyLimit + 1, max: 4 * bodyLimit }))
        .map(([r, size]) => ({
          kind: 'oversize',
          route: r,
          body: `{"stable":"v1","reason":"${'x'.repeat(size)}"}`,
          names: [],
        })),
    },
    {
      // Invalid UTF-8 inside the stable version and inside a key.
      weight: 2,
      arbitrary: fc
        .tuple(route, fc.constantFrom([0xed, 0xa0, 0x80], [0xff], [0xc0, 0xaf]))
        .map(([r, bytes]) => ({
          kind: 'bytes',
          route: r,
          body: Buffer.concat([
            Buffer.from('{"stable":"v'),
            Buffer.from(bytes),
            Buffer.from('","'),
            Buffer.from(bytes),
            Buffer.from('":1}'),
          ]),
          names: ['stable', 'body'],
        })),
    },
    {
      weight: 2,
      arbitrary: route.map((r) => ({ kind: 'empty', route: r, body: '', names: [] })),
    },
    {
      // An Authorization header over Node's header limit (16 KiB): refused before any route.
      weight: 1,
      arbitrary: fc.tuple(route, fc.integer({ min: 17_000, max: 40_000 })).map(([r, n]) => ({
        kind: 'header-overflow',
        route: r,
        authorization: `Bearer ${'A'.repeat(n)}`,
        names: ['headers'],
      })),
    },
    {
      // Well-formed, and refused all the same: a stale revision, a rollback with no canary.
      weight: 4,
      arbitrary: fc.oneof(
        fc.integer({ min: 1, max: 2 ** 31 }).map((revision) => ({
          kind: 'stale',
          route: 'delete' as const,
          body: JSON.stringify({ expectedRevision: revision }),
          names: ['expectedRevision'],
        })),
        fc
          .option(
            fc.record(
              { reason: fc.string({ maxLength: 500 }), expectedRevision: fc.nat() },
              { requiredKeys: [] },
            ),
            { nil: undefined },
          )
          .map((body) => ({
            kind: 'no-canary',
            route: 'rollback' as const,
            ...(body !== undefined && { body: JSON.stringify(body) }),
            names: ['canary'],
          })),
      ),
    },
    {
      // A body that would be taken (a valid config, or none) at a scene that is not one.
      weight: 4,
      // `..` is resolved away by the client: at reload it names the reload of every scene.
      arbitrary: fc
        .tuple(route, badScene)
        .filter(([r, scene]) => r !== 'reload' || !['..', '%2e%2e'].includes(scene))
        .map(([r, scene]) => ({
          kind: 'scene',
          route: r,
          scene,
          ...(r === 'put' && { body: '{"stable":"v1"}' }),
          // `url` where the router refuses it (too long, bad percent-encoding, `..` resolved away).
          names: ['scene', 'url'],
        })),
    },
    {
      // A request that would be taken but for its Authorization header.
      weight: 10,
      arbitrary: fc.tuple(route, forged(token)).map(([r, authorization]) => ({
        kind: 'auth',
        route: r,
        authorization,
        ...(r === 'put' && { body: '{"stable":"v2","reason":"forged"}' }),
        names: ['headers.authorization'],
      })),
    },
  );

/** Statuses each kind may get, on every route or per route: never a 5xx, and never a write. */
const STATUSES: Record<string, number[] | Record<Route, number[]>> = {
  poisoned: { put: [400, 409, 422], delete: [400, 409], rollback: [400, 422], reload: [200] },
  'not-object': { put: [400], delete: [400], rollback: [400], reload: [200] },
  bytes: { put: [400, 422], delete: [400], rollback: [400], reload: [200, 400] },
  empty: [400],
  stale: [409],
  'no-canary': [422],
  truncated: [400],
  'content-type': [415],
  oversize: [413],
  scene: [400, 404, 414],
  auth: [401, 403],
  'header-overflow': [431],
};

export function allowed({ kind, route: r }: Hostile): number[] {
  const statuses = STATUSES[kind] ?? [];
  return Array.isArray(statuses) ? statuses : statuses[r];
}
