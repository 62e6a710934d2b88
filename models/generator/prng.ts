/**
 * Our own seeded PRNG (mulberry32) so generated weights and demo data are byte-for-byte
 * identical on every run and machine. Only 32-bit integer ops and exact float ops
 * (+, *, /, sqrt, floor) are used: Math.random is unseeded, and transcendental functions
 * (log, cos, exp) are not guaranteed bit-identical across engines and platforms.
 */

/** FNV-1a over UTF-16 code units: turns a stable key such as "ctr/fc1.weight" into a seed. */
export function hashKey(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  }
  return h >>> 0;
}

export class Prng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /**
   * One stream per named tensor/table: adding or reordering tensors then leaves the values
   * of all the others unchanged, which keeps diffs of regenerated files small.
   */
  static fromKey(key: string): Prng {
    return new Prng(hashKey(key));
  }

  /** Next unsigned 32-bit integer. */
  nextU32(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** Uniform in [0, 1); exact because 2^32 is a power of two. */
  next(): number {
    return this.nextU32() / 4294967296;
  }

  /** Uniform in [lo, hi). */
  uniform(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next();
  }

  /** Uniform integer in [lo, hi] (both inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }
}
