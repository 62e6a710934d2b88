/**
 * Rank request bodies for load generators: users and candidate items drawn from a feature file
 * (so features are found, as in production) or random ids (so every lookup misses and takes its
 * defaults). Bodies are serialised once, before any step, so building them costs the load nothing.
 */
import { readFeatureFile } from '@app/features/testing';

export interface IdPools {
  users: string[];
  items: string[];
}

export interface BodyOptions {
  candidates: number;
  /** Distinct bodies to cycle through. */
  count: number;
  seed?: number;
  topK?: number;
}

const DEVICES = ['ios', 'android', 'web'];

export async function idsFromFeatureFile(path: string): Promise<IdPools> {
  const pools: IdPools = { users: [], items: [] };
  for (const record of await readFeatureFile(path))
    (record.entity === 'user' ? pools.users : pools.items).push(record.id);
  if (pools.users.length === 0 || pools.items.length === 0)
    throw new Error(`${path} needs at least one user and one item row`);
  return pools;
}

/** Ids no feature store is expected to hold: `ru<n>` users and `ri<n>` items. */
export function randomIdPools(seed = 1, users = 1000, items = 100_000): IdPools {
  const next = lcg(seed);
  const pick = (prefix: string, n: number) =>
    Array.from({ length: n }, () => `${prefix}${Math.floor(next() * 1e9)}`);
  return { users: pick('ru', users), items: pick('ri', items) };
}

/**
 * `count` bodies of `candidates` items each: distinct items per body while the pool has enough
 * (a partial shuffle), repeats only past that.
 */
export function buildBodies(pools: IdPools, options: BodyOptions): Buffer[] {
  const next = lcg(options.seed ?? 1);
  const order = pools.items.slice();
  return Array.from({ length: options.count }, () => {
    const candidates: { id: string }[] = new Array(options.candidates);
    for (let i = 0; i < options.candidates; i++) {
      const at = i % order.length;
      const swap = at + Math.floor(next() * (order.length - at));
      [order[at], order[swap]] = [order[swap], order[at]];
      candidates[i] = { id: order[at] };
    }
    const body = {
      user: { id: pools.users[Math.floor(next() * pools.users.length)] },
      context: { hour: Math.floor(next() * 24), device: DEVICES[Math.floor(next() * 3)] },
      candidates,
      ...(options.topK === undefined ? {} : { topK: options.topK }),
    };
    return Buffer.from(JSON.stringify(body));
  });
}

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}
