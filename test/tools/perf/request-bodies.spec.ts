import { join } from 'node:path';
import { buildBodies, idsFromFeatureFile, randomIdPools } from './request-bodies';

describe('rank request bodies', () => {
  it('draws users and items from the feature file', async () => {
    const pools = await idsFromFeatureFile(join(__dirname, '../../../models/demo/features.jsonl'));
    expect(pools.users).toHaveLength(200);
    expect(pools.items).toHaveLength(5000);
    expect(pools.users[0]).toBe('u1');
    expect(pools.items).toContain('i5000');
  });

  it('builds valid JSON bodies with distinct candidates while the pool allows', () => {
    const pools = { users: ['u1', 'u2'], items: Array.from({ length: 50 }, (_, i) => `i${i}`) };
    const bodies = buildBodies(pools, { candidates: 40, count: 5, seed: 3, topK: 10 });
    expect(bodies).toHaveLength(5);
    for (const buffer of bodies) {
      const body = JSON.parse(buffer.toString());
      expect(pools.users).toContain(body.user.id);
      expect(body.topK).toBe(10);
      expect(body.context.hour).toBeGreaterThanOrEqual(0);
      const ids = body.candidates.map((c: { id: string }) => c.id);
      expect(ids).toHaveLength(40);
      expect(new Set(ids).size).toBe(40);
      for (const id of ids) expect(pools.items).toContain(id);
    }
    expect(bodies[0].equals(bodies[1])).toBe(false);
    // Past the pool's size, candidates repeat rather than fail.
    const wide = JSON.parse(buildBodies(pools, { candidates: 120, count: 1 })[0].toString());
    expect(wide.candidates).toHaveLength(120);
    expect(wide).not.toHaveProperty('topK');
  });

  it('makes random ids that no demo feature file holds', () => {
    const pools = randomIdPools(7, 10, 100);
    expect(pools.users).toHaveLength(10);
    expect(pools.items.every((id) => /^ri\d+$/.test(id))).toBe(true);
    expect(randomIdPools(7, 10, 100)).toEqual(pools);
  });
});
