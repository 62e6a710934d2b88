/** What one load step comes to: throughput, latency percentiles and errors, and its table row. */
import type { LoadMode, StepResult } from './load-generator';

export interface StepSummary {
  mode: LoadMode;
  level: number;
  seconds: number;
  requests: number;
  ok: number;
  failed: number;
  requestsPerS: number;
  candidatesPerS: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  errors: Record<string, number>;
}

/** Nearest-rank percentile of ascending values: the smallest value with p% of them at or below. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** Throughput counts successful requests only; failures are listed by code instead. */
export function summarize(result: StepResult, candidatesPerRequest: number): StepSummary {
  const sorted = Float64Array.from(result.latenciesMs).sort();
  const seconds = result.elapsedS > 0 ? result.elapsedS : result.seconds;
  const failed = Object.values(result.errors).reduce((a, b) => a + b, 0);
  return {
    mode: result.mode,
    level: result.level,
    seconds,
    requests: result.sent,
    ok: result.ok,
    failed,
    requestsPerS: result.ok / seconds,
    candidatesPerS: (result.ok * candidatesPerRequest) / seconds,
    p50Ms: percentile(sorted, 50),
    p90Ms: percentile(sorted, 90),
    p99Ms: percentile(sorted, 99),
    errors: { ...result.errors },
  };
}

/** `400 BAD_REQUEST x3, ECONNRESET x1`, most frequent first; `-` when none. */
export function formatErrors(errors: Record<string, number>): string {
  const entries = Object.entries(errors).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return entries.length === 0 ? '-' : entries.map(([code, n]) => `${code} x${n}`).join(', ');
}

/** The step's level as people say it: `c=4` or `200/s`. */
export function levelLabel(mode: LoadMode, level: number): string {
  return mode === 'concurrency' ? `c=${level}` : `${level}/s`;
}

const COLUMNS = [
  ['concurrency', 11],
  ['requests/s', 10],
  ['candidates/s', 12],
  ['p50 ms', 8],
  ['p90 ms', 8],
  ['p99 ms', 8],
  ['ok', 7],
  ['errors', 0],
] as const;

export function tableHeader(mode: LoadMode): string {
  return COLUMNS.map(([name, width], i) =>
    (i === 0 && mode === 'rate' ? 'rate/s' : name).padStart(width),
  ).join('  ');
}

export function tableRow(s: StepSummary): string {
  const ms = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : '-');
  const cells = [
    String(s.level),
    s.requestsPerS.toFixed(1),
    Math.round(s.candidatesPerS).toString(),
    ms(s.p50Ms),
    ms(s.p90Ms),
    ms(s.p99Ms),
    String(s.ok),
    formatErrors(s.errors),
  ];
  return cells.map((cell, i) => cell.padStart(COLUMNS[i][1])).join('  ');
}
