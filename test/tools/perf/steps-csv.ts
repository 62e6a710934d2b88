/** The steps as CSV (RFC 4180 quoting), one row per step, for spreadsheets and plots. */
import { StepSummary } from './step-summary';

const HEADER = [
  'mode',
  'level',
  'seconds',
  'requests',
  'ok',
  'failed',
  'requests_per_s',
  'candidates_per_s',
  'p50_ms',
  'p90_ms',
  'p99_ms',
  'errors',
];

function cell(value: string | number): string {
  const text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : value;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function stepsToCsv(steps: readonly StepSummary[]): string {
  const round = (v: number, digits: number) => (Number.isFinite(v) ? +v.toFixed(digits) : NaN);
  const lines = steps.map((s) =>
    [
      s.mode,
      s.level,
      round(s.seconds, 3),
      s.requests,
      s.ok,
      s.failed,
      round(s.requestsPerS, 2),
      round(s.candidatesPerS, 0),
      round(s.p50Ms, 2),
      round(s.p90Ms, 2),
      round(s.p99Ms, 2),
      // `code=count` pairs; a code may hold spaces ("400 BAD_REQUEST") but never a semicolon.
      Object.entries(s.errors)
        .map(([code, n]) => `${code}=${n}`)
        .join(';'),
    ]
      .map(cell)
      .join(','),
  );
  return [HEADER.join(','), ...lines].join('\n') + '\n';
}
