/** Numbers and times as the status page shows them; a missing figure reads "n/a". */

export function percent(fraction: number): string {
  if (!Number.isFinite(fraction)) return 'n/a';
  return `${Number((fraction * 100).toFixed(2))} %`;
}

/** An error-rate difference in percentage points. */
export function points(fraction: number): string {
  if (!Number.isFinite(fraction)) return 'n/a';
  const n = Number((fraction * 100).toFixed(2));
  return `${n} ${n === 1 ? 'pt' : 'pts'}`;
}

export function millis(ms: number): string {
  if (!Number.isFinite(ms)) return 'n/a';
  return `${Number(ms.toFixed(ms < 10 ? 2 : 1))} ms`;
}

export function count(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a';
}

export function decimal(x: number, digits = 3): string {
  return Number.isFinite(x) ? String(Number(x.toFixed(digits))) : 'n/a';
}

/** `2025-01-31 12:34:56 UTC` */
export function utc(at: Date): string {
  return Number.isFinite(at.getTime())
    ? `${at.toISOString().slice(0, 19).replace('T', ' ')} UTC`
    : 'n/a';
}
