/**
 * RedisFeatureWriter's merge script against the real Redis on 127.0.0.1:6379: an update rewrites
 * only the members it names and `_ts`; every other member keeps its exact text (no cjson
 * round trip), and a key no update can ever be merged into is refused with a typed error.
 * Keys live under a prefix unique to this run and are deleted after.
 */
import {
  decodeBlob,
  parseFeatureUpdate,
  RedisFeatureWriter,
  RedisKeys,
  StoredRowRefusedError,
} from '@app/features/testing';
import fc from 'fast-check';
import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';

const prefix = `itw:${randomUUID().slice(0, 8)}:`;
const keys = new RedisKeys(prefix);

/** Every UTF-16 code unit as a \uXXXX escape: the same name, spelled differently. */
const escapeAll = (name: string) =>
  `"${[...Array(name.length).keys()].map((i) => `\\u${name.charCodeAt(i).toString(16).padStart(4, '0')}`).join('')}"`;

/** Raw JSON value text as anything might have stored it (redis-cli, another writer). */
const rawValue = fc.oneof(
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
  fc.constantFrom(
    '0.1',
    '1e21',
    '1E+21',
    '-0',
    '0',
    '1.5e-7',
    '123456789012345678',
    '3.14159265358979323846',
  ),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
  fc.string({ unit: 'binary' }).map((s) => JSON.stringify(s)),
  fc.string({ unit: 'grapheme' }).map(escapeAll),
  fc.constantFrom('true', 'false', 'null', '"a\\"}{]["', '"\\ud800"'),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
);
const featureName = fc
  .oneof(
    fc.string({ unit: 'binary', maxLength: 8 }),
    fc.constantFrom('price', 'é', '😀', '\ud800', 'a"b', 'a\\b', '', 'toString', 'constructor'),
  )
  .filter((name) => name !== '_ts' && name !== '__proto__');
const updateValue = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.string({ unit: 'binary' }),
  fc.boolean(),
  fc.constantFrom(Number('123456789012345678'), 0.1, 1e21, -0),
);
const space = fc.constantFrom('', ' ', '\n\t ');

interface Member {
  name: string;
  token: string;
  before: string;
  after: string;
  raw: string;
}
const member = fc.record({
  name: featureName,
  escaped: fc.boolean(),
  before: space,
  after: space,
  raw: rawValue,
});

describe('RedisFeatureWriter.mergeIfNewer (real Redis)', () => {
  const redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true, maxRetriesPerRequest: 1 });
  let writer: RedisFeatureWriter;

  beforeAll(async () => {
    await redis.connect();
    writer = new RedisFeatureWriter(redis, keys);
  });

  afterAll(async () => {
    const stale = await redis.keys(`${prefix}*`);
    if (stale.length > 0) await redis.del(...stale);
    await redis.quit();
  });

  it('leaves the members an update does not name byte-identical (big integers, 0.1, 1e21, escapes)', async () => {
    const key = keys.key('item', 'precise');
    const stored =
      '{"id_hash":123456789012345678,"p":0.1,"x":1e21,"s":"a\\u00e9\\n","n":null,' +
      '"nested":{"a":[1,{"b":"}"}]},"\\u0071":1,"_ts":1}';
    await redis.set(key, stored);

    expect(await writer.mergeIfNewer('item', 'precise', { q: 2, fresh: 'yes' }, 2)).toBe(true);

    expect(await redis.get(key)).toBe(
      '{"id_hash":123456789012345678,"p":0.1,"x":1e21,"s":"a\\u00e9\\n","n":null,' +
        '"nested":{"a":[1,{"b":"}"}]},"\\u0071":2,"_ts":2,"fresh":"yes"}',
    );
  });

  it('writes a missing key as the update plus _ts, and counts an older update as stale', async () => {
    const key = keys.key('user', 'new');
    expect(
      await writer.mergeIfNewer('user', 'new', { age: 3, big: Number('123456789012345678') }, 0),
    ).toBe(true);
    expect(await redis.get(key)).toBe('{"age":3,"big":123456789012345680,"_ts":0}');
    expect(await writer.mergeIfNewer('user', 'new', { age: 4 }, 0)).toBe(false);
    expect(await redis.get(key)).toBe('{"age":3,"big":123456789012345680,"_ts":0}');
  });

  it('property: untouched members keep their text, named ones take the update, _ts decides', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(member, { selector: (m) => m.name, maxLength: 8 }),
        fc.option(fc.oneof(fc.integer({ min: 0, max: 100 }).map(String), fc.constant('"5"')), {
          nil: undefined,
        }),
        fc.array(fc.tuple(fc.boolean(), featureName, updateValue), { maxLength: 6 }),
        fc.integer({ min: 0, max: 100 }),
        async (generated, storedTs, picks, ts) => {
          const members: Member[] = generated.map((m) => ({
            name: m.name,
            token: m.escaped ? escapeAll(m.name) : JSON.stringify(m.name),
            before: m.before,
            after: m.after,
            raw: m.raw,
          }));
          // Updates name stored members (by their decoded name) as well as new ones.
          const named: Record<string, string | number | boolean> = {};
          for (const [existing, name, value] of picks) {
            const target =
              existing && members.length > 0 ? members[name.length % members.length].name : name;
            named[target] = value;
          }
          // Through the update parser, as the writer and the cache refresher both see it.
          const message = JSON.stringify({ entity: 'item', id: 'x', fields: named, timestamp: ts });
          const parsed = parseFeatureUpdate(Buffer.from(message), undefined);
          if (!parsed.ok) throw new Error(parsed.reason);
          const { fields } = parsed.update;
          const parts = members.map((m) => `${m.token}${m.before}:${m.after}${m.raw}`);
          if (storedTs !== undefined) parts.push(`"_ts":${storedTs}`);
          const stored = `{ ${parts.join(' ,\n')} }`;
          const id = `p${n++}`;
          const key = keys.key('item', id);
          await redis.set(key, stored);

          const written = await writer.mergeIfNewer('item', id, fields, ts);

          const after = await redis.get(key);
          const storedNumber = storedTs !== undefined && storedTs !== '"5"' ? Number(storedTs) : 0;
          expect(written).toBe(ts > storedNumber);
          if (!written) {
            expect(after).toBe(stored);
            return;
          }
          const expected = members.map((m) =>
            Object.hasOwn(fields, m.name)
              ? `${m.token}:${JSON.stringify(fields[m.name])}`
              : `${m.token}${m.before}:${m.after}${m.raw}`,
          );
          if (storedTs !== undefined) expected.push(`"_ts":${ts}`);
          const known = new Set(members.map((m) => m.name));
          for (const name of Object.keys(fields))
            if (!known.has(name))
              expected.push(`${JSON.stringify(name)}:${JSON.stringify(fields[name])}`);
          if (storedTs === undefined) expected.push(`"_ts":${ts}`);
          expect(after).toBe(`{${expected.join(',')}}`);
          // What a reader decodes is what the item cache computes: the stored row, then the update.
          const before = decodeBlob(stored);
          const decoded = decodeBlob(after!);
          if (!before.ok || !decoded.ok) throw new Error('a stored row became unreadable');
          expect(decoded.ts).toBe(ts);
          expect(decoded.row).toEqual({ ...before.row, ...fields });
        },
      ),
      { numRuns: 400 },
    );
  });

  it('scans nesting of any depth without recursion', async () => {
    const key = keys.key('item', 'deep');
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    await redis.set(key, `{"deep":${deep},"a":1}`);
    expect(await writer.mergeIfNewer('item', 'deep', { a: 2 }, 5)).toBe(true);
    expect(await redis.get(key)).toBe(`{"deep":${deep},"a":2,"_ts":5}`);
  });

  it.each([
    ['not JSON', 'price=3'],
    ['an array', '[1,2]'],
    ['a string', '"row"'],
    ['unterminated', '{"a":1'],
    ['a leading zero', '{"a":01}'],
    ['text after the object', '{"a":1}x'],
    ['a raw control character', '{"a":"\u0001"}'],
    ['a bad escape', '{"a":"\\x"}'],
    ['a nested syntax error', '{"a":[1,{"b" 2}]}'],
    ['an unclosed deep array', `{"a":${'['.repeat(50_000)}}`],
    ['a trailing comma', '{"a":1,}'],
  ])('refuses a stored row that is %s, and leaves it as it is', async (_what, stored) => {
    const key = keys.key('item', 'corrupt');
    await redis.set(key, stored);
    const error = await writer
      .mergeIfNewer('item', 'corrupt', { a: 2 }, Date.now())
      .catch((e) => e);
    expect(error).toBeInstanceOf(StoredRowRefusedError);
    expect(error.kind).toBe('bad_row');
    expect(error.message).toMatch(
      new RegExp(
        `^stored row at Redis key ${key} cannot be merged: (not a JSON object|.+ at byte \\d+)$`,
      ),
    );
    expect(await redis.get(key)).toBe(stored);
  });

  it('refuses a key of another Redis type, naming the type', async () => {
    const key = keys.key('item', 'hash');
    await redis.hset(key, 'price', '3');
    const error = await writer
      .mergeIfNewer('item', 'hash', { price: 4 }, Date.now())
      .catch((e) => e);
    expect(error).toBeInstanceOf(StoredRowRefusedError);
    expect(error.kind).toBe('wrong_type');
    expect(error.message).toBe(`Redis key ${key} holds a hash, not a string row (WRONGTYPE)`);
    expect(await redis.hget(key, 'price')).toBe('3');
  });
});
