import fc from 'fast-check';
import { fnv1a32 } from './fnv1a';

/** The separator of cross columns (libs/pipeline), spelled out: common must not import pipeline. */
const CROSS_SEPARATOR = '\u0001';

/** FNV-1a 32-bit over raw bytes, written independently of the code under test. */
function fnvOfBytes(bytes: Uint8Array, seed = 0x811c9dc5): number {
  let h = seed;
  for (const byte of bytes) {
    h ^= byte;
    h = Number((BigInt(h) * 0x01000193n) & 0xffffffffn);
  }
  return h;
}

const utf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));

describe('fnv1a32', () => {
  it.each([
    ['', 0x811c9dc5],
    ['a', 0xe40c292c],
    ['foobar', 0xbf9cf968],
  ])('hashes %p to the published FNV-1a 32-bit value', (text, hash) => {
    expect(fnv1a32(text)).toBe(hash);
  });

  it('agrees with the reference implementation on the published vectors', () => {
    expect(fnvOfBytes(utf8(''))).toBe(0x811c9dc5);
    expect(fnvOfBytes(utf8('a'))).toBe(0xe40c292c);
    expect(fnvOfBytes(utf8('foobar'))).toBe(0xbf9cf968);
  });

  it.each([
    ['2-byte UTF-8 (Latin-1 supplement)', 'café'],
    ['2-byte UTF-8 (Cyrillic)', 'Москва'],
    ['3-byte UTF-8 (CJK)', '北京市'],
    ['3-byte UTF-8 (euro sign, U+FFFF edge)', '€\uffff'],
    ['4-byte UTF-8 (emoji, a surrogate pair)', 'id-😀-x'],
    ['mixed scripts', 'naïve 東京 🚀 ok'],
    ['the cross separator', `a${CROSS_SEPARATOR}b`],
  ])('hashes %s as its UTF-8 bytes', (_what, text) => {
    expect(fnv1a32(text)).toBe(fnvOfBytes(utf8(text)));
  });

  it('returns an unsigned 32-bit integer', () => {
    for (const text of ['', 'a', 'foobar', 'user-123', '😀', 'x'.repeat(1000)]) {
      const h = fnv1a32(text);
      expect(Number.isInteger(h)).toBe(true);
      expect(h).toBeGreaterThanOrEqual(0);
      expect(h).toBeLessThan(2 ** 32);
    }
  });

  it('is stable across calls and sensitive to every character', () => {
    expect(fnv1a32('item-42')).toBe(fnv1a32('item-42'));
    expect(fnv1a32('item-42')).not.toBe(fnv1a32('item-43'));
    expect(fnv1a32('ab')).not.toBe(fnv1a32('ba'));
  });

  it('uses a custom seed as the starting value', () => {
    expect(fnv1a32('', 12345)).toBe(12345);
    expect(fnv1a32('a', 0x811c9dc5)).toBe(fnv1a32('a'));
    expect(fnv1a32('a', 1)).not.toBe(fnv1a32('a'));
  });

  describe('lone surrogates', () => {
    it.each([
      ['a lone high surrogate', 'a\ud800b'],
      ['a lone high surrogate at the end', 'id-\udbff'],
      ['a lone low surrogate', '\udc00x'],
      ['a low before a high (no pair)', '\udc00\ud800'],
      ['two high surrogates then a pair', '\ud800\ud83d\ude00'],
    ])('hashes %s as U+FFFD, like Buffer.from', (_what, text) => {
      expect(fnv1a32(text)).toBe(fnvOfBytes(utf8(text)));
    });

    it('equals FNV-1a over Buffer.from(s, "utf8") for any string, surrogates included', () => {
      const surrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
      const piece = fc.oneof(
        fc.string({ unit: 'binary' }),
        fc.string({ unit: 'grapheme' }),
        fc.string({ unit: 'binary-ascii' }),
        surrogate,
      );
      const text = fc.array(piece, { maxLength: 8 }).map((parts) => parts.join(''));
      fc.assert(
        fc.property(text, fc.integer({ min: 0, max: 0xffffffff }), (s, seed) => {
          const bytes = utf8(s);
          // A seed continues the stream (cross columns hash their prefix once): same bytes rule.
          return fnv1a32(s) === fnvOfBytes(bytes) && fnv1a32(s, seed) === fnvOfBytes(bytes, seed);
        }),
        { numRuns: 2000 },
      );
    });
  });
});
