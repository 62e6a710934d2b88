import fc from 'fast-check';
import Fastify, { FastifyInstance } from 'fastify';
import type { RankedItem, RankResult } from '@app/pipeline';
import { RANK_RESPONSE_SCHEMA } from './rank-response.schema';

/** Fastify's own compiled serializer for the schema, as the rank route uses it. */
describe('RANK_RESPONSE_SCHEMA', () => {
  let app: FastifyInstance;
  let url: string;
  let answer: unknown;

  beforeAll(async () => {
    app = Fastify();
    app.post('/rank', { schema: { response: { 200: RANK_RESPONSE_SCHEMA } } }, async () => answer);
    url = `${await app.listen({ host: '127.0.0.1', port: 0 })}/rank`;
  });
  afterAll(() => app.close());

  const serialized = async (result: RankResult) => {
    answer = result;
    const reply = await fetch(url, { method: 'POST' });
    expect(reply.status).toBe(200);
    return Buffer.from(await reply.arrayBuffer()).toString('utf8');
  };

  // Any UTF-16 text (lone surrogates, controls, quotes, backslashes) and any float32 score.
  const text = fc.string({ unit: 'binary', maxLength: 60 });
  const rankedItem: fc.Arbitrary<RankedItem> = fc.oneof(
    fc.record({ id: text, score: fc.float({ noNaN: true, noDefaultInfinity: true }) }),
    fc.record({ id: text, score: fc.double({ noNaN: true, noDefaultInfinity: true }) }),
    fc.record({ id: text, score: fc.constant(null), nonFinite: fc.constant(true as const) }),
  );
  const rankResult: fc.Arbitrary<RankResult> = fc.record(
    {
      scene: text,
      version: text,
      arm: text,
      degraded: fc.boolean(),
      items: fc.array(rankedItem, { maxLength: 30 }),
      nonFiniteScores: fc.nat(),
    },
    { requiredKeys: ['scene', 'version', 'arm', 'degraded', 'items'] },
  );

  it('writes every answer exactly as JSON.stringify does', async () => {
    await fc.assert(
      fc.asyncProperty(rankResult, async (result) => {
        expect(await serialized(result)).toBe(JSON.stringify(result));
      }),
      { numRuns: 500 },
    );
  });

  it('writes a typical answer (100 items, float32 scores) exactly as JSON.stringify does', async () => {
    const items = Array.from({ length: 100 }, (_, i) => ({
      id: `item-${i}`,
      score: Math.fround(1 / (i + 3)),
    }));
    const result: RankResult = {
      scene: 'feed',
      version: 'v1',
      arm: 'stable',
      degraded: false,
      items,
    };
    expect(await serialized(result)).toBe(JSON.stringify(result));
  });
});
