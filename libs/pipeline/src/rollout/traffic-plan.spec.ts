import fc from 'fast-check';
import { sharesArb, trafficConfigArb } from './traffic-arbitraries';
import { DEFAULT_GUARDRAIL, TrafficConfig } from './traffic-config';
import { TrafficPlan } from './traffic-plan';

const USERS = 10_000;
/** Families of user ids as callers send them: sequential, numeric, padded, UUID-like. */
const ID_FAMILIES: ((i: number) => string)[] = [
  (i) => `u${i}`,
  (i) => String(i),
  (i) => `user-${String(i).padStart(8, '0')}`,
  (i) => `${(i * 2654435761) >>> 0}-4f1c-${i.toString(16)}-a9e0`,
];
const users = (family: number) => Array.from({ length: USERS }, (_, i) => ID_FAMILIES[family](i));
/**
 * The split properties are statistical: over 10,000 users an arm's share has a standard error of
 * at most 0.5 points, so a 2-point bound holds by 4 standard errors. A fixed seed keeps the suite
 * deterministic while still drawing many configurations, salts and id families. Few runs: under
 * Jest (a vm context, where each `Math.imul` is a slow global lookup) a hash costs ~3 us.
 */
const STATISTICAL = { seed: 20_240_601, numRuns: 12 };

const config = (extra: Partial<TrafficConfig> = {}): TrafficConfig => ({
  stable: 'v1',
  experiments: [],
  ...extra,
});
const canary = (version: string, percent: number) => ({
  version,
  percent,
  guardrail: { ...DEFAULT_GUARDRAIL },
});

/** Share (0-100) of `ids` for which `pick` returns each value. */
function sharesOf<T>(ids: string[], pick: (id: string) => T): Map<T, number> {
  const counts = new Map<T, number>();
  for (const id of ids) {
    const key = pick(id);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return new Map([...counts].map(([key, n]) => [key, (n * 100) / ids.length]));
}

/** The share of all users each arm serves under the documented precedence. */
function expectedShares(c: TrafficConfig): Map<string, number> {
  const expected = new Map<string, number>();
  let left = 1;
  for (const e of c.experiments) {
    let total = 0;
    for (const arm of e.arms) {
      const key = `${e.name}:${arm.name}`;
      expected.set(key, (expected.get(key) ?? 0) + arm.share * left);
      total += arm.share;
    }
    left *= 1 - total / 100;
  }
  const canaryShare = (c.canary?.percent ?? 0) * left;
  if (c.canary) expected.set('canary', canaryShare);
  expected.set('stable', 100 * left - canaryShare);
  return expected;
}

/** Chi-square critical value at p = 0.001 (Wilson-Hilferty; within 1% of the table from dof 1). */
function chiSquareCritical(dof: number): number {
  const a = 2 / (9 * dof);
  return dof * (1 - a + 3.0902 * Math.sqrt(a)) ** 3;
}

/** Pearson's chi-square of independence for pairs of labels. */
function chiSquare(pairs: [string, string][]): { statistic: number; dof: number } {
  const rows = new Map<string, number>();
  const cols = new Map<string, number>();
  const cells = new Map<string, number>();
  for (const [a, b] of pairs) {
    rows.set(a, (rows.get(a) ?? 0) + 1);
    cols.set(b, (cols.get(b) ?? 0) + 1);
    cells.set(`${a}\u0000${b}`, (cells.get(`${a}\u0000${b}`) ?? 0) + 1);
  }
  let statistic = 0;
  for (const [a, ra] of rows)
    for (const [b, cb] of cols) {
      const expected = (ra * cb) / pairs.length;
      statistic += ((cells.get(`${a}\u0000${b}`) ?? 0) - expected) ** 2 / expected;
    }
  return { statistic, dof: (rows.size - 1) * (cols.size - 1) };
}

describe('TrafficPlan', () => {
  it('serves stable to everyone when there is nothing else, with no shadow', () => {
    const plan = new TrafficPlan(config());
    for (const id of users(0).slice(0, 1000))
      expect(plan.choose(id)).toEqual({ version: 'v1', arm: 'stable' });
  });

  it('gives every user the same choice on every call and from every plan of the same config', () => {
    fc.assert(
      fc.property(trafficConfigArb, fc.array(fc.string(), { maxLength: 50 }), (c, ids) => {
        const plan = new TrafficPlan(c);
        const replica = new TrafficPlan(JSON.parse(JSON.stringify(c)));
        for (const id of ids) {
          const choice = plan.choose(id);
          expect(plan.choose(id)).toBe(choice);
          expect(replica.choose(id)).toEqual(choice);
        }
      }),
    );
  });

  it('makes its choices ahead of time: users with the same outcome share one object', () => {
    const plan = new TrafficPlan(config({ canary: canary('v2', 50) }));
    const byArm = new Map<string, object>();
    for (const id of users(0).slice(0, 200)) {
      const choice = plan.choose(id);
      expect(byArm.get(choice.arm) ?? choice).toBe(choice);
      byArm.set(choice.arm, choice);
    }
    expect([...byArm.keys()].sort()).toEqual(['canary', 'stable']);
  });

  it('holds each arm of one experiment within 2 points of its share over 10,000 users', () => {
    fc.assert(
      fc.property(
        sharesArb(1, 6),
        fc.string({ minLength: 1 }),
        fc.integer({ min: 0, max: 3 }),
        (shares, salt, family) => {
          const arms = shares.map((share, j) => ({ name: `a${j}`, version: 'v4', share }));
          const plan = new TrafficPlan(config({ experiments: [{ name: 'e', salt, arms }] }));
          const seen = sharesOf(users(family), (id) => plan.choose(id).arm);
          for (const arm of arms)
            expect(Math.abs((seen.get(`e:${arm.name}`) ?? 0) - arm.share)).toBeLessThanOrEqual(2);
          const rest = 100 - shares.reduce((a, b) => a + b, 0);
          expect(Math.abs((seen.get('stable') ?? 0) - rest)).toBeLessThanOrEqual(2);
        },
      ),
      STATISTICAL,
    );
  });

  it('serves every arm, canary and stable within 2 points of the share the precedence gives it', () => {
    fc.assert(
      fc.property(trafficConfigArb, fc.integer({ min: 0, max: 3 }), (c, family) => {
        const plan = new TrafficPlan(c);
        const ids = users(family);
        const seen = sharesOf(ids, (id) => plan.choose(id).arm);
        for (const [arm, share] of expectedShares(c))
          expect(Math.abs((seen.get(arm) ?? 0) - share)).toBeLessThanOrEqual(2);
        // Membership, before precedence, matches each configured share too.
        for (const e of c.experiments) {
          const held = sharesOf(ids, (id) => plan.armOf(e.name, id));
          for (const arm of e.arms)
            expect(Math.abs((held.get(arm.name) ?? 0) - arm.share)).toBeLessThanOrEqual(2);
        }
      }),
      STATISTICAL,
    );
  });

  it('keeps two experiments with different salts independent (chi-square, p = 0.001)', () => {
    // Arms of 5% or more, leaving 0 or 5% or more: every cell expects 25 users or more, as the
    // chi-square approximation needs.
    const shares = fc
      .array(fc.integer({ min: 5, max: 60 }), { minLength: 1, maxLength: 4 })
      .filter((s) => s.reduce((a, b) => a + b, 0) <= 95 || s.reduce((a, b) => a + b, 0) === 100);
    fc.assert(
      fc.property(
        shares,
        shares,
        fc.tuple(fc.string({ minLength: 1 }), fc.string({ minLength: 1 })),
        fc.integer({ min: 0, max: 3 }),
        (sharesA, sharesB, [saltA, saltB], family) => {
          fc.pre(saltA !== saltB);
          const exp = (name: string, salt: string, shares: number[]) => ({
            name,
            salt,
            arms: shares.map((share, j) => ({ name: `a${j}`, version: 'v4', share })),
          });
          const plan = new TrafficPlan(
            config({ experiments: [exp('A', saltA, sharesA), exp('B', saltB, sharesB)] }),
          );
          const pairs = users(family).map((id): [string, string] => [
            plan.armOf('A', id) ?? '-',
            plan.armOf('B', id) ?? '-',
          ]);
          const { statistic, dof } = chiSquare(pairs);
          if (dof > 0) expect(statistic).toBeLessThan(chiSquareCritical(dof));
        },
      ),
      STATISTICAL,
    );
  });

  it('splits sequential ids independently under salts that FNV-1a alone correlates', () => {
    const half = (name: string, salt: string) => ({
      name,
      salt,
      arms: [{ name: 'in', version: 'v4', share: 50 }],
    });
    const plan = new TrafficPlan(config({ experiments: [half('A', 'salt1'), half('B', 'salt2')] }));
    const pairs = users(0).map((id): [string, string] => [
      plan.armOf('A', id) ?? '-',
      plan.armOf('B', id) ?? '-',
    ]);
    expect(chiSquare(pairs).statistic).toBeLessThan(chiSquareCritical(1));
  });

  it('lets the first experiment claim a user before a later one, the canary or stable', () => {
    const c = config({
      canary: canary('v2', 50),
      experiments: [
        { name: 'A', salt: 'a', arms: [{ name: 'x', version: 'v4', share: 30 }] },
        { name: 'B', salt: 'b', arms: [{ name: 'y', version: 'v5', share: 30 }] },
      ],
    });
    const plan = new TrafficPlan(c);
    const lonely = new TrafficPlan(config({ canary: canary('v2', 50) }));
    let both = 0;
    for (const id of users(0)) {
      const [a, b] = [plan.armOf('A', id), plan.armOf('B', id)];
      const { arm, version } = plan.choose(id);
      if (a && b) both++;
      if (a) expect({ arm, version }).toEqual({ arm: 'A:x', version: 'v4' });
      else if (b) expect({ arm, version }).toEqual({ arm: 'B:y', version: 'v5' });
      // Unclaimed users meet the canary exactly as they would with no experiments.
      else expect(arm).toBe(lonely.choose(id).arm);
    }
    expect(both).toBeGreaterThan(0);
  });

  it('only adds users to the canary as its percent rises', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 9_999 }),
        fc.integer({ min: 0, max: 9_999 }),
        fc.array(fc.string(), { minLength: 1, maxLength: 200 }),
        (p, q, ids) => {
          const [low, high] = [Math.min(p, q) / 100, Math.max(p, q) / 100];
          const before = new TrafficPlan(config({ canary: canary('v2', low) }));
          const after = new TrafficPlan(config({ canary: canary('v2', high) }));
          for (const id of ids)
            if (before.choose(id).arm === 'canary') expect(after.choose(id).arm).toBe('canary');
        },
      ),
    );
  });

  it('draws new users for a new canary version', () => {
    const v2 = new TrafficPlan(config({ canary: canary('v2', 10) }));
    const v3 = new TrafficPlan(config({ canary: canary('v3', 10) }));
    const ids = users(0);
    const inBoth = ids.filter(
      (id) => v2.choose(id).arm === 'canary' && v3.choose(id).arm === 'canary',
    );
    // Independent draws of 10% each overlap on about 1% of users, not 10%.
    expect((inBoth.length * 100) / ids.length).toBeLessThan(2);
  });

  it('asks for the shadow on its percent of users, whatever arm serves them', () => {
    const plan = new TrafficPlan(
      config({ canary: canary('v2', 50), shadow: { version: 'v3', percent: 30, topK: 20 } }),
    );
    const ids = users(3);
    for (const arm of ['stable', 'canary']) {
      const served = ids.filter((id) => plan.choose(id).arm === arm);
      const shadowed = served.filter((id) => plan.choose(id).shadow);
      expect(Math.abs((shadowed.length * 100) / served.length - 30)).toBeLessThanOrEqual(3);
    }
    const withShadow = ids.map((id) => plan.choose(id)).find((c) => c.shadow);
    expect(withShadow?.shadow).toEqual({ version: 'v3', topK: 20 });

    const never = new TrafficPlan(config({ shadow: { version: 'v3', percent: 0 } }));
    const always = new TrafficPlan(config({ shadow: { version: 'v3', percent: 100 } }));
    for (const id of ids.slice(0, 500)) {
      expect(never.choose(id).shadow).toBeUndefined();
      expect(always.choose(id).shadow).toEqual({ version: 'v3' });
    }
  });

  it('lists every version it may serve or shadow', () => {
    const plan = new TrafficPlan(
      config({
        canary: canary('v2', 5),
        experiments: [{ name: 'e', salt: 's', arms: [{ name: 'a', version: 'v4', share: 5 }] }],
        shadow: { version: 'v3', percent: 100 },
      }),
    );
    expect([...plan.versions()].sort()).toEqual(['v1', 'v2', 'v3', 'v4']);
    expect(plan.armOf('nope', 'u1')).toBeUndefined();
  });
});
