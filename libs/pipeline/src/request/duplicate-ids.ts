import { randomInt } from 'node:crypto';

/** Probes one id may take before the request falls back to a Map (see DuplicateIds). */
export const MAX_PROBES = 32;

/**
 * Finds repeated ids in one request's candidate list without a Map per request: a 3,000-candidate
 * request grew a Map to 3,000 entries (rehashing it a dozen times on the way), about a quarter of
 * all the bytes the serving thread allocated under load. Here an open-addressing table of
 * candidate indices, reused by every request on the thread, holds the ids seen so far: a slot is
 * taken when its stamp is the current request's, so starting a request clears nothing.
 *
 * The hash is seeded per process, so ids cannot be chosen ahead to collide; and an id that takes
 * more than `maxProbes` probes (ids built to collide all the same, or a bad run of luck) moves the
 * rest of the request to a Map holding the same ids: a request costs at most `maxProbes` string
 * comparisons per id, whatever its ids, and the answer is the Map's either way.
 *
 * Use: `start(count)`, then `firstIndex(id, i, idAt)` for candidates 0, 1, 2... in order, each
 * call with the valid ids only. Not re-entrant: one request at a time (the validation is
 * synchronous).
 */
export class DuplicateIds {
  private slots = new Int32Array(0);
  private stamps = new Int32Array(0);
  private stamp = 0;
  private mask = 0;
  private readonly seed = randomInt(0x7fffffff);
  /** Every id added so far with its index, once the request has left the table. */
  private fallback: Map<string, number> | undefined;

  constructor(private readonly maxProbes = MAX_PROBES) {}

  /** Starts a request of up to `candidates` ids. */
  start(candidates: number): void {
    const size = tableSize(candidates);
    if (size > this.slots.length) {
      this.slots = new Int32Array(size);
      this.stamps = new Int32Array(size);
      this.stamp = 0;
    }
    this.mask = this.slots.length - 1;
    if (this.stamp === 0x7fffffff) {
      this.stamps.fill(0);
      this.stamp = 0;
    }
    this.stamp++;
    this.fallback = undefined;
  }

  /**
   * The index of the first earlier candidate with `id`, or -1 when `id` is new (it is then
   * remembered as candidate `index`). `idAt(j)` gives the id of an earlier candidate j.
   */
  firstIndex(id: string, index: number, idAt: (j: number) => string): number {
    if (this.fallback !== undefined) return this.mapFirst(this.fallback, id, index);
    const { slots, stamps, stamp, mask } = this;
    let at = this.hash(id) & mask;
    for (let probes = 0; probes <= this.maxProbes; probes++) {
      if (stamps[at] !== stamp) {
        stamps[at] = stamp;
        slots[at] = index;
        return -1;
      }
      const j = slots[at];
      if (idAt(j) === id) return j;
      at = (at + 1) & mask;
    }
    // Too long a run: the ids seen so far (the slots stamped for this request, each id once with
    // its first index), and the rest of the request, go to a Map.
    const map = new Map<string, number>();
    for (let k = 0; k < slots.length; k++)
      if (stamps[k] === stamp) map.set(idAt(slots[k]), slots[k]);
    this.fallback = map;
    return this.mapFirst(map, id, index);
  }

  private mapFirst(map: Map<string, number>, id: string, index: number): number {
    const first = map.get(id);
    if (first !== undefined) return first;
    map.set(id, index);
    return -1;
  }

  /** FNV-1a over the UTF-16 code units, from the process's seed. */
  private hash(id: string): number {
    let h = this.seed ^ 0x811c9dc5;
    for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
    return (h ^ (h >>> 15)) >>> 0;
  }
}

/** A power of two at least twice `candidates` (and at least 64): at most half the slots taken. */
function tableSize(candidates: number): number {
  let size = 64;
  while (size < candidates * 2) size *= 2;
  return size;
}
