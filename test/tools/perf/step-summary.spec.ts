import fc from 'fast-check';
import type { StepResult } from './load-generator';
import { formatErrors, percentile, summarize, tableHeader, tableRow } from './step-summary';

const result = (over: Partial<StepResult> = {}): StepResult => ({
  mode: 'concurrency',
  level: 4,
  seconds: 2,
  elapsedS: 2,
  sent: 12,
  ok: 10,
  latenciesMs: [10, 1, 9, 2, 8, 3, 7, 4, 6, 5],
  errors: { '400 BAD_REQUEST': 1, ECONNRESET: 1 },
  ...over,
});

describe('step summary', () => {
  it('takes nearest-rank percentiles', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(sorted, 50)).toBe(50);
    expect(percentile(sorted, 99)).toBe(99);
    expect(percentile(sorted, 100)).toBe(100);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
  });

  it('gives a percentile that is one of the values and grows with p', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 1e6, noNaN: true }), { minLength: 1 }),
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 0, max: 100 }),
        (values, p, q) => {
          const sorted = [...values].sort((a, b) => a - b);
          expect(sorted).toContain(percentile(sorted, p));
          if (p <= q) expect(percentile(sorted, p)).toBeLessThanOrEqual(percentile(sorted, q));
        },
      ),
    );
  });

  it('counts throughput from successful requests and keeps failures by code', () => {
    const s = summarize(result(), 3000);
    expect(s).toMatchObject({
      requests: 12,
      ok: 10,
      failed: 2,
      requestsPerS: 5,
      candidatesPerS: 15000,
      p50Ms: 5,
      p90Ms: 9,
      p99Ms: 10,
    });
    expect(formatErrors(s.errors)).toBe('400 BAD_REQUEST x1, ECONNRESET x1');
    expect(formatErrors({})).toBe('-');
  });

  it('prints a row under its header, with dashes where no request succeeded', () => {
    const header = tableHeader('rate');
    expect(header.trim().split(/\s{2,}/)).toEqual([
      'rate/s',
      'requests/s',
      'candidates/s',
      'p50 ms',
      'p90 ms',
      'p99 ms',
      'ok',
      'errors',
    ]);
    const row = tableRow(
      summarize(result({ ok: 0, latenciesMs: [], errors: { '503 OVERLOADED': 12 } }), 100),
    );
    expect(row.trim().split(/\s{2,}/)).toEqual([
      '4',
      '0.0',
      '0',
      '-',
      '-',
      '-',
      '0',
      '503 OVERLOADED x12',
    ]);
  });
});
