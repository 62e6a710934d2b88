/**
 * FNV-1a, 32 bit, over the UTF-8 bytes of a string. Training pipelines bucket ids the same way
 * (hash/cross columns) and tools writing Redis place keys with it (slot buckets), so it is
 * documented in the README and kept dependency-free.
 */
export const FNV_OFFSET_BASIS = 0x811c9dc5;
const PRIME = 0x01000193;

export function fnv1a32(text: string, seed = FNV_OFFSET_BASIS): number {
  let h = seed;
  for (let i = 0; i < text.length; i++) {
    let code = text.charCodeAt(i);
    if (code < 0x80) {
      h = Math.imul(h ^ code, PRIME);
      continue;
    }
    if (code >= 0xd800 && code < 0xe000) {
      const low = code < 0xdc00 && i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
      if (low >= 0xdc00 && low < 0xe000) {
        code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        i++;
      } else {
        // An unpaired surrogate is not a code point: UTF-8 encoders (Buffer.from, TextEncoder)
        // write U+FFFD in its place, and so must we, or ids would hash differently elsewhere.
        code = 0xfffd;
      }
    }
    if (code < 0x800) {
      h = Math.imul(h ^ (0xc0 | (code >> 6)), PRIME);
    } else if (code < 0x10000) {
      h = Math.imul(h ^ (0xe0 | (code >> 12)), PRIME);
      h = Math.imul(h ^ (0x80 | ((code >> 6) & 0x3f)), PRIME);
    } else {
      h = Math.imul(h ^ (0xf0 | (code >> 18)), PRIME);
      h = Math.imul(h ^ (0x80 | ((code >> 12) & 0x3f)), PRIME);
      h = Math.imul(h ^ (0x80 | ((code >> 6) & 0x3f)), PRIME);
    }
    h = Math.imul(h ^ (0x80 | (code & 0x3f)), PRIME);
  }
  return h >>> 0;
}
