/**
 * Feature values over HTTP (example bundle, in-memory store seeded from models/demo): every value
 * is resolved through its declared type before any op reads it, a request value unusable as that
 * type falls back to the stored value and then the default, and each such value is counted per
 * scene and version. A number that overflows its float32 column counts as unusable too.
 */
import { Logger } from '@nestjs/common';
import { RankerClient, Reply } from './ranker-client';

type Item = { id: string; score: number };

const candidates = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `i${i + 1}` }));

/** Sum of a counter's samples whose labels include every `labels` pair. */
async function counter(
  ranker: RankerClient,
  name: string,
  labels: Record<string, string>,
): Promise<number> {
  const text = await (await fetch(`${ranker.baseUrl}/metrics`)).text();
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) && pairs.every((p) => line.includes(p)))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

describe('feature values resolve through their declared type (ranker app over HTTP)', () => {
  let ranker: RankerClient;
  const badValues = (source: string) =>
    counter(ranker, 'ranker_rank_bad_values_total', {
      scene: 'feed',
      version: 'v1',
      source,
      reason: 'wrong_type',
    });

  const rank = async (body: Record<string, unknown>): Promise<Item[]> => {
    const reply: Reply = await ranker.rank('feed', { topK: 20, ...body });
    expect(reply.status).toBe(200);
    return reply.body.items;
  };
  const withContext = (context: Record<string, unknown>) =>
    rank({
      user: { id: 'u1' },
      context: { device: 'ios', ...context },
      candidates: candidates(20),
    });

  beforeAll(async () => {
    // The throttled warnings name each bad value; they are expected here.
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    ranker = await RankerClient.start();
  });
  afterAll(async () => {
    await ranker.close();
    jest.restoreAllMocks();
  });

  it('hashes a number feature by its resolved number: "20.0", "20", 20 and 20.0 are one hour', async () => {
    const base = await withContext({ hour: 20 });
    for (const hour of ['20.0', '20', ' 20 ', 20.0, '2e1']) {
      expect(await withContext({ hour })).toEqual(base);
    }
    expect(await withContext({ hour: 21 })).not.toEqual(base);
  });

  it('reads a boolean as 1/0 in a number feature, and as "true"/"false" in a string feature', async () => {
    expect(await withContext({ hour: true })).toEqual(await withContext({ hour: 1 }));
    expect(await withContext({ hour: false })).toEqual(await withContext({ hour: '0' }));
    expect(await withContext({ device: true })).toEqual(await withContext({ device: 'true' }));
    expect(await withContext({ device: 20 })).toEqual(await withContext({ device: '20' }));
  });

  it('falls back to the stored user value when the request value is not a number, and counts it', async () => {
    const before = await badValues('user');
    // u3 is stored with age 52; "old" is no number, so the stored 52 is used, not the default 30.
    const stored = await rank({ user: { id: 'u3' }, candidates: candidates(20) });
    const bad = await rank({
      user: { id: 'u3', features: { age: 'old' } },
      candidates: candidates(20),
    });
    const defaulted = await rank({
      user: { id: 'u3', features: { age: 30 } },
      candidates: candidates(20),
    });
    expect(bad).toEqual(stored);
    expect(bad).not.toEqual(defaulted);
    expect(await badValues('user')).toBe(before + 1);
  });

  it('falls back to the stored item value when the candidate value is not a number, and counts it', async () => {
    const before = await badValues('item');
    const body = (features?: Record<string, unknown>) => ({
      user: { id: 'u1' },
      candidates: [{ id: 'i1', ...(features && { features }) }, ...candidates(20).slice(1)],
    });
    const stored = await rank(body());
    // i1 is stored with price 33.54; the default 0 would put it in other buckets.
    expect(await rank(body({ price: 'cheap' }))).toEqual(stored);
    expect(await rank(body({ price: 0 }))).not.toEqual(stored);
    expect(await badValues('item')).toBe(before + 1);
  });

  it('takes the default for a context number that overflows float32 in its column, and counts it', async () => {
    const before = await badValues('context');
    const defaulted = await withContext({});
    const huge = await withContext({ hour: 1e308 });
    for (const item of huge) expect(Number.isFinite(item.score)).toBe(true);
    expect(huge).toEqual(defaulted);
    expect(await withContext({ hour: -1e300 })).toEqual(defaulted);
    expect(await badValues('context')).toBe(before + 2);
  });
});
