import { FeatureRow, isFeatureValue } from '../feature-row';

/** Reserved field of a stored row: the time (ms since epoch) of the update that wrote it. */
export const TS_FIELD = '_ts';

export type DecodedBlob =
  { ok: true; row: FeatureRow; ts: number; badFields: string[] } | { ok: false; reason: string };

/**
 * A stored row is one JSON object of feature name to string, finite number or boolean, plus an
 * optional `_ts`; anything can write it (`redis-cli SET rk:item:i1 '{"price":9.99}'`). Fields of
 * another type are dropped and reported, so they take the bundle's defaults.
 */
export function decodeBlob(text: string): DecodedBlob {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return { ok: false, reason: 'not a JSON object' };
  }
  const fields = parsed as Record<string, unknown>;
  const rawTs = Object.hasOwn(fields, TS_FIELD) ? fields[TS_FIELD] : undefined;
  const ts = typeof rawTs === 'number' && Number.isFinite(rawTs) ? rawTs : 0;
  const badFields: string[] = [];
  const row: Record<string, string | number | boolean> = {};
  for (const name of Object.keys(fields)) {
    if (name === TS_FIELD) continue;
    const value = fields[name];
    // `row.__proto__ = value` would set the prototype or be dropped silently: never a field.
    if (name !== '__proto__' && isFeatureValue(value)) row[name] = value;
    else badFields.push(name);
  }
  return { ok: true, row, ts, badFields };
}

export function encodeBlob(row: FeatureRow, ts: number): string {
  return JSON.stringify({ ...row, [TS_FIELD]: ts });
}
