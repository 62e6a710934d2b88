import { GOLDEN_PART_CANDIDATES, GoldenPart, goldenParts } from './golden-parts';

const caseLine = (n: number, expected = (c: number) => c / 1000) =>
  JSON.stringify({
    user: { id: 'u1', features: { age: 30 } },
    context: { hour: 9 },
    candidates: Array.from({ length: n }, (_, c) => ({ id: `i${c}`, features: { price: c } })),
    expected: Array.from({ length: n }, (_, c) => expected(c)),
  });

describe('goldenParts', () => {
  it('cuts a case into parts of at most GOLDEN_PART_CANDIDATES, each with its own expected scores', () => {
    const n = 2 * GOLDEN_PART_CANDIDATES + 76;
    const parts = [...goldenParts(`${caseLine(n)}\n`)] as Extract<GoldenPart, { offset: number }>[];
    expect(parts.map((p) => [p.line, p.offset, p.candidates.length, p.total])).toEqual([
      [1, 0, GOLDEN_PART_CANDIDATES, n],
      [1, GOLDEN_PART_CANDIDATES, GOLDEN_PART_CANDIDATES, n],
      [1, 2 * GOLDEN_PART_CANDIDATES, 76, n],
    ]);
    for (const p of parts) {
      expect(p.user).toEqual({ id: 'u1', features: { age: 30 } });
      expect(p.context).toEqual({ hour: 9 });
      p.candidates.forEach((c, k) => {
        expect(c.id).toBe(`i${p.offset + k}`);
        expect(p.expected[k]).toBe((p.offset + k) / 1000);
      });
    }
  });

  it('names each bad line by number, skips blank ones', () => {
    const text = [
      'not json',
      '',
      '[1]',
      '{"user":{"id":"u1"},"candidates":[{"id":"a"},{"id":"a"}],"expected":[1,2]}',
      caseLine(2, () => NaN).replace(/null/g, '"x"'),
      '{"user":{"id":"u1"},"candidates":[],"expected":[]}',
      '   ',
      caseLine(1),
    ].join('\n');
    const parts = [...goldenParts(text)];
    expect(parts).toEqual([
      { line: 1, error: 'not JSON' },
      { line: 3, error: 'not a JSON object' },
      { line: 4, error: expect.stringContaining('candidates[1].id') },
      { line: 5, error: 'expected must be one finite score per candidate' },
      { line: 6, error: 'candidates: must not be empty' },
      expect.objectContaining({ line: 8, offset: 0, total: 1, expected: [0] }),
    ]);
  });
});
