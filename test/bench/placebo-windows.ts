/**
 * What bench:swap's pooled ratio reads with no swap at all. The real figure pools the requests of
 * a few short windows (a few hundred of them, so its p99 is set by their three or four slowest)
 * and divides by the p99 of the ~14,000 steady ones: on a machine whose steady load has stalls of
 * its own, that ratio is above 1 some of the time whatever a swap costs. So the same statistic is
 * drawn over placebo windows: windows of the real windows' durations, placed at random in the
 * steady stretches (touching no real window), their requests pooled and their p99 divided by the
 * same steady p99. Where the real ratio sits among the placebo draws tells a swap's cost from the
 * statistic's own spread on that machine.
 */
import { percentile } from '../tools/perf/step-summary';

/** A request: scheduled at `due`, answered at `end` (ms, one clock); `ok` for a 200. */
export interface TimedRequest {
  due: number;
  end: number;
  ok: boolean;
}

export interface TimeWindow {
  from: number;
  to: number;
}

export interface PlaceboOptions {
  /** Placebo draws, each a set of windows as many and as long as the real ones. */
  draws: number;
  /** Seed of the placements (the same seed, the same draws). */
  seed: number;
  /** The p99 the pooled placebo p99 is divided by (the run's steady p99). */
  steadyP99: number;
}

export interface PlaceboSummary {
  /** Draws that could be placed (a run too short for its windows places fewer). */
  draws: number;
  median: number;
  /** 90th percentile of the placebo ratios. */
  p90: number;
  /** Share of the draws whose ratio is at least the real one (0 = the real one is above all). */
  atOrAbove: number;
}

/** A request belongs to a window when it was in flight at any time inside it (as bench:swap's). */
function inFlight(s: TimedRequest, w: TimeWindow): boolean {
  return s.end >= w.from && s.due <= w.to;
}

/** Small seeded generator (mulberry32): the placements are reproducible from the seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The placebo ratios: per draw, each real window's duration placed at a uniform random start
 * between the first request's schedule and the last answer, retried where it would overlap a real
 * window or an earlier placebo window of the draw (up to 1,000 tries per window; a draw that
 * cannot place all of them is left out). Requests in flight during any real window never count.
 */
export function placeboRatios(
  sent: readonly TimedRequest[],
  windows: readonly TimeWindow[],
  { draws, seed, steadyP99 }: PlaceboOptions,
): number[] {
  const ok = sent.filter((s) => s.ok && !windows.some((w) => inFlight(s, w)));
  if (ok.length === 0 || windows.length === 0 || !(steadyP99 > 0)) return [];
  const start = Math.min(...sent.map((s) => s.due));
  const stop = Math.max(...sent.map((s) => s.end));
  const next = random(seed);
  const ratios: number[] = [];
  for (let d = 0; d < draws; d++) {
    const placed: TimeWindow[] = [];
    for (const real of windows) {
      const length = real.to - real.from;
      for (let tries = 0; tries < 1000; tries++) {
        const from = start + next() * (stop - start - length);
        const candidate = { from, to: from + length };
        const clash = [...windows, ...placed].some(
          (w) => candidate.from <= w.to && w.from <= candidate.to,
        );
        if (!clash && from >= start) {
          placed.push(candidate);
          break;
        }
      }
    }
    if (placed.length < windows.length) continue;
    const latencies = ok
      .filter((s) => placed.some((w) => inFlight(s, w)))
      .map((s) => s.end - s.due);
    if (latencies.length === 0) continue;
    ratios.push(percentile(Float64Array.from(latencies).sort(), 99) / steadyP99);
  }
  return ratios;
}

export function summarizePlacebo(ratios: readonly number[], real: number): PlaceboSummary {
  const sorted = Float64Array.from(ratios).sort();
  return {
    draws: ratios.length,
    median: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    atOrAbove: ratios.length === 0 ? NaN : ratios.filter((r) => r >= real).length / ratios.length,
  };
}
