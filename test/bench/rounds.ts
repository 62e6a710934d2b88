/**
 * Interleaved rounds: these machines drift by 20-30% within minutes, so a ratio between a raw
 * phase and a system phase is only meaningful when both ran close together. Each benchmark
 * alternates raw and system phases in rounds, takes one ratio per round, and reports the median
 * ratio with its spread (how much the rounds disagree).
 */

/** BENCH_ROUNDS (default 3). Fewer than three is allowed for a quick check, never for figures. */
export function roundsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.BENCH_ROUNDS ?? '3';
  const rounds = Number(text);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 100)
    throw new Error(`BENCH_ROUNDS must be an integer from 1 to 100, got "${text}"`);
  return rounds;
}

/** Positive number of seconds from an env variable, with a default. */
export function secondsFromEnv(name: string, fallback: number, env = process.env): number {
  const text = env[name];
  if (text === undefined) return fallback;
  const seconds = Number(text);
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new Error(`${name} must be a positive number of seconds, got "${text}"`);
  return seconds;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export interface Spread {
  median: number;
  min: number;
  max: number;
  /** (max - min) / median: 0.1 means the rounds disagree by 10% of the reported figure. */
  relative: number;
}

export function spread(values: readonly number[]): Spread {
  const mid = median(values);
  const min = Math.min(...values);
  const max = Math.max(...values);
  return { median: mid, min, max, relative: mid === 0 ? NaN : (max - min) / mid };
}

/** Named figures, one value per round each, reported as medians. */
export class RoundLog {
  private readonly values = new Map<string, number[]>();

  add(figures: Record<string, number>): void {
    for (const [name, value] of Object.entries(figures)) {
      const list = this.values.get(name) ?? [];
      list.push(value);
      this.values.set(name, list);
    }
  }

  byRound(name: string): number[] {
    const list = this.values.get(name);
    if (list === undefined) throw new Error(`no figure "${name}" was recorded`);
    return list;
  }

  median(name: string): number {
    return median(this.byRound(name));
  }

  spread(name: string): Spread {
    return spread(this.byRound(name));
  }

  /** The JSON block every benchmark adds for its ratios: each round's value and min-max. */
  ratioDetails(names: readonly string[]): {
    ratios_by_round: Record<string, (number | null)[]>;
    ratio_ranges: Record<string, [number | null, number | null]>;
  } {
    const byRound: Record<string, (number | null)[]> = {};
    const ranges: Record<string, [number | null, number | null]> = {};
    for (const name of names) {
      byRound[name] = this.byRound(name).map((v) => fixed(v));
      const { min, max } = this.spread(name);
      ranges[name] = [fixed(min), fixed(max)];
    }
    return { ratios_by_round: byRound, ratio_ranges: ranges };
  }
}

/** Rounds a figure for a JSON report (NaN and infinities become null, as JSON has no such number). */
export function fixed(value: number, digits = 3): number | null {
  return Number.isFinite(value) ? +value.toFixed(digits) : null;
}
