import fc from 'fast-check';
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

  it('gives back every line as it was: the parts of a case join to its candidates and scores, anything else is named', () => {
    // Lines of three kinds, in any order, with blank lines between: valid cases of 1-1,200
    // candidates, JSON that is not a golden case, and text that is not JSON.
    const validLine = fc.integer({ min: 1, max: 1200 }).map((n) => ({ n, text: caseLine(n) }));
    const badLine = fc.oneof(
      fc.string().filter((t) => t.trim() !== '' && !t.includes('\n')),
      fc.jsonValue().map((v) => JSON.stringify(v)),
    );
    const line = fc.oneof(
      validLine,
      badLine.map((text) => ({ n: -1, text })),
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(line, fc.constantFrom('', '  ', '\t')), { maxLength: 6 }),
        (lines) => {
          const text = lines.map(([l, blank]) => `${l.text}\n${blank}`).join('\n');
          const byLine = new Map<number, GoldenPart[]>();
          for (const part of goldenParts(text))
            byLine.set(part.line, [...(byLine.get(part.line) ?? []), part]);
          lines.forEach(([l], k) => {
            const parts = byLine.get(2 * k + 1) ?? [];
            const cases = parts.filter(
              (p): p is Extract<GoldenPart, { offset: number }> => 'offset' in p,
            );
            if (cases.length === 0) {
              // Not a golden case (a generated one may be valid only by chance: never here).
              expect(parts).toHaveLength(1);
              expect(l.n).toBe(-1);
              return;
            }
            expect(l.n).toBeGreaterThan(0);
            expect(cases.map((p) => p.offset)).toEqual(
              Array.from(
                { length: Math.ceil(l.n / GOLDEN_PART_CANDIDATES) },
                (_, i) => i * GOLDEN_PART_CANDIDATES,
              ),
            );
            const ids = cases.flatMap((p) => p.candidates.map((c) => c.id));
            const expected = cases.flatMap((p) => p.expected);
            expect(ids).toEqual(Array.from({ length: l.n }, (_, c) => `i${c}`));
            expect(expected).toEqual(Array.from({ length: l.n }, (_, c) => c / 1000));
            for (const p of cases) {
              expect(p.total).toBe(l.n);
              expect(p.candidates.length).toBeLessThanOrEqual(GOLDEN_PART_CANDIDATES);
            }
          });
          // Blank lines yield nothing.
          expect([...byLine.keys()].every((n) => n % 2 === 1)).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });
});
