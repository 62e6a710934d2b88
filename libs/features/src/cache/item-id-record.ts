/**
 * The record an ItemIdIndex keeps per row, 16 int32 in its table, and how an id is packed and
 * hashed into one.
 */

/** Ids of up to this many characters, each below 256, are indexed (their characters inline). */
export const MAX_INDEXED_ID_LENGTH = 32;

// A record is 16 int32 (64 bytes). What a hit reads comes first and the characters last, so that
// for a short id it all lies in 40 bytes: one cache line when the table's memory starts in the first
// half of a line (an ArrayBuffer's memory is only 16-byte aligned). Moving these fields to the front
// measured no difference (test/bench/RESULTS.md); it costs nothing either.
export const REC = 16;
/** 0: empty; -1: removed (probes go past it); n > 0: entry n - 1. */
export const STATE = 0;
export const HASH = 1;
/** The expiry, a float64 in ints 2-3: float index `rec / 2 + EXPIRES`. */
export const EXPIRES = 1;
export const TICK = 4;
export const MEMO_KEY = 5;
export const MEMO_VALUE = 6;
export const LENGTH = 7;
/** The id's characters, four to an int32 (8 int32: MAX_INDEXED_ID_LENGTH). */
export const CHARS = 8;
export const CHAR_INTS = MAX_INDEXED_ID_LENGTH / 4;
export const EMPTY = 0;
export const REMOVED = -1;

/** The id just hashed, packed as records hold it (see `hashId`). */
export const packed = new Int32Array(CHAR_INTS);

/**
 * The id's hash (seeded FNV-1a over its characters, then mixed), its characters packed into
 * `packed` four to an int32 and the rest zeroed; undefined when it cannot be indexed.
 */
export function hashId(id: string, seed: number): number | undefined {
  const n = id.length;
  if (n === 0 || n > MAX_INDEXED_ID_LENGTH) return undefined;
  let h = seed ^ 0x811c9dc5;
  let word = 0;
  for (let i = 0; i < n; i++) {
    const c = id.charCodeAt(i);
    if (c > 0xff) return undefined;
    word |= c << ((i & 3) << 3);
    if ((i & 3) === 3) {
      packed[i >> 2] = word;
      word = 0;
    }
    h = Math.imul(h ^ c, 0x01000193);
  }
  // The last word, and zeros after it: a record holds all CHAR_INTS words.
  for (let w = (n + 3) >> 2; w < CHAR_INTS; w++) packed[w] = 0;
  if ((n & 3) !== 0) packed[n >> 2] = word;
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  return h ^ (h >>> 12);
}
