import { percentile } from '../tools/perf/step-summary';
import { placeboRatios, summarizePlacebo, TimedRequest, TimeWindow } from './placebo-windows';

/** A request every 5 ms for `seconds`, each taking `latency(i)` ms. */
function schedule(seconds: number, latency: (i: number) => number): TimedRequest[] {
  const sent: TimedRequest[] = [];
  for (let i = 0; i < seconds * 200; i++)
    sent.push({ due: i * 5, end: i * 5 + latency(i), ok: true });
  return sent;
}

function p99(sent: readonly TimedRequest[]): number {
  return percentile(Float64Array.from(sent.map((s) => s.end - s.due)).sort(), 99);
}

const WINDOWS: TimeWindow[] = [10_000, 20_000, 30_000, 40_000, 50_000, 60_000].map((from) => ({
  from,
  to: from + 250,
}));

describe('placebo windows (bench:swap)', () => {
  it('reads about 1 where every request takes the same time, and counts no real window', () => {
    // Requests in flight during the real windows are 100x slower: none of them may count.
    const inReal = (t: number) => WINDOWS.some((w) => t >= w.from && t <= w.to);
    const sent = schedule(70, (i) => (inReal(i * 5) ? 400 : 4));
    const steady = sent.filter((s) => !inReal(s.due));
    const ratios = placeboRatios(sent, WINDOWS, { draws: 100, seed: 1, steadyP99: p99(steady) });
    expect(ratios).toHaveLength(100);
    for (const r of ratios) expect(r).toBe(1);
    expect(summarizePlacebo(ratios, 3).atOrAbove).toBe(0);
  });

  it('spreads above 1.5 on a steady load with stalls of its own, as a real run can', () => {
    // One request in 150 stalls at 10x (p99 of the whole run is the normal 4 ms).
    let state = 7;
    const stall = () => ((state = (state * 48271) % 2147483647) % 150 === 0 ? 40 : 4);
    const sent = schedule(70, () => stall());
    const ratios = placeboRatios(sent, WINDOWS, { draws: 200, seed: 2, steadyP99: p99(sent) });
    const summary = summarizePlacebo(ratios, 1.5);
    expect(p99(sent)).toBe(4);
    expect(summary.draws).toBe(200);
    expect(summary.p90).toBeGreaterThan(1.5);
    expect(summary.atOrAbove).toBeGreaterThan(0.1);
    expect(summary.atOrAbove).toBeLessThan(1);
  });

  it('is the same for the same seed, and leaves out failed requests', () => {
    const sent = schedule(70, (i) => 3 + (i % 7));
    sent[100].ok = false;
    sent[100].end = sent[100].due + 10_000;
    const options = { draws: 50, seed: 9, steadyP99: p99(sent.filter((s) => s.ok)) };
    const a = placeboRatios(sent, WINDOWS, options);
    expect(placeboRatios(sent, WINDOWS, options)).toEqual(a);
    expect(Math.max(...a)).toBeLessThan(1.5);
  });

  it('gives nothing to summarize without requests, windows or a steady p99', () => {
    const sent = schedule(10, () => 4);
    expect(placeboRatios([], WINDOWS, { draws: 5, seed: 1, steadyP99: 4 })).toEqual([]);
    expect(placeboRatios(sent, [], { draws: 5, seed: 1, steadyP99: 4 })).toEqual([]);
    expect(placeboRatios(sent, WINDOWS, { draws: 5, seed: 1, steadyP99: NaN })).toEqual([]);
    expect(summarizePlacebo([], 1).atOrAbove).toBeNaN();
  });

  it('leaves out a draw whose windows cannot be placed in a run too short for them', () => {
    const sent = schedule(2, () => 4);
    const long = [
      { from: 100, to: 1900 },
      { from: 1950, to: 1990 },
    ];
    expect(placeboRatios(sent, long, { draws: 5, seed: 1, steadyP99: 4 })).toEqual([]);
  });
});
