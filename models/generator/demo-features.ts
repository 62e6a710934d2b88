/**
 * models/demo/features.jsonl: user and item feature rows for demos, load tests and the
 * feature-store seeding script. One JSON object per line, users first, then items.
 * Distributions are skewed where real catalogues are (popular categories, cheap items,
 * low CTR), so transforms and fusion see realistic values. Numbers are rounded to few
 * decimals to keep the file well under 1 MB.
 */
import { Prng } from './prng';

export const DEMO_USERS = 200;
export const DEMO_ITEMS = 5000;
const CATEGORIES = 40;

type FieldValue = string | number;
interface FeatureRow {
  entity: 'user' | 'item';
  id: string;
  fields: Record<string, FieldValue>;
}

function round(x: number, decimals: number): number {
  const p = 10 ** decimals;
  return Math.round(x * p) / p;
}

/** u^2 favours low indices: a few categories get most of the catalogue and the interest. */
function skewedCategory(rng: Prng): string {
  const u = rng.next();
  return `cat${Math.floor(u * u * CATEGORIES)}`;
}

function userRow(rng: Prng, n: number): FeatureRow {
  return {
    entity: 'user',
    id: `u${n}`,
    fields: {
      age: rng.int(16, 70),
      gender: rng.pick(['f', 'm', 'x']),
      city: `c${rng.int(0, 49)}`,
      level: rng.int(1, 10),
      active_days_30d: rng.int(0, 30),
      fav_category: skewedCategory(rng),
    },
  };
}

/** 1-3 distinct tags; drawn until distinct so the count is exact. */
function tags(rng: Prng): string {
  const count = rng.int(1, 3);
  const picked: number[] = [];
  while (picked.length < count) {
    const t = rng.int(0, 99);
    if (!picked.includes(t)) picked.push(t);
  }
  return picked.map((t) => `t${t}`).join('|');
}

function itemRow(rng: Prng, n: number): FeatureRow {
  const u = rng.next();
  const c = rng.next();
  const r = rng.next();
  return {
    entity: 'item',
    id: `i${n}`,
    fields: {
      category: skewedCategory(rng),
      brand: `b${rng.int(0, 299)}`,
      author: `a${rng.int(0, 999)}`,
      // Cubic skew: median ~$25, a long tail up to $199.99.
      price: round(0.99 + 199 * u * u * u, 2),
      ctr_7d: round(0.2 * c * c, 4),
      // Ratings cluster high, as on real storefronts.
      rating: round(5 - 4 * r * r, 1),
      age_days: rng.int(0, 365),
      tags: tags(rng),
    },
  };
}

export function buildDemoFeatures(): Uint8Array {
  const users = Prng.fromKey('demo/users');
  const items = Prng.fromKey('demo/items');
  const lines: string[] = [];
  for (let n = 1; n <= DEMO_USERS; n++) lines.push(JSON.stringify(userRow(users, n)));
  for (let n = 1; n <= DEMO_ITEMS; n++) lines.push(JSON.stringify(itemRow(items, n)));
  return Buffer.from(lines.join('\n') + '\n', 'utf8');
}
