import { FeatureRow, FeatureValue } from '@app/features';
import { BundleSpec, FeatureDecl, FeatureRef, ModelInputSpec } from '../bundle/bundle-definition';
import { OverflowRisk, overflowRisk } from './column-math';
import { FeatureFrame } from './feature-frame';

export type NumberReader = (frame: FeatureFrame, row: number) => number;
export type TextReader = (frame: FeatureFrame, row: number) => string;
type Lookup = (frame: FeatureFrame, row: number) => FeatureValue | undefined;

/**
 * `row[name]` only when the row has it as its own property: a name from outside (`constructor`,
 * `toString`, `__proto__`) never resolves to a member of Object.prototype. Those members are
 * functions or objects, which no feature value is, so the own-property test is made only for such
 * a value: the common lookup (a string, number or boolean) costs a property read.
 */
export function ownValue(row: FeatureRow | undefined, name: string): FeatureValue | undefined {
  if (row === undefined) return undefined;
  const value = row[name] as unknown;
  if (typeof value !== 'object' && typeof value !== 'function') return value as FeatureValue;
  return Object.hasOwn(row, name) ? (value as unknown as FeatureValue) : undefined;
}

/**
 * Reads every declared feature through its declared type, one layer after another: the request's
 * value, else the stored one, else the declared default. A value of a layer that is unusable as
 * that type (`"abc"` for a number), or a number that some float column of the bundle cannot hold
 * as a finite float32 (`1e308` standardized), is reported through `frame.onBadValue` and the next
 * layer is tried. Resolution is per feature, not per column: a value is used by every column that
 * reads it or by none, so `hash(hour)` and `standardize(hour)` never see two different hours.
 *
 * Readers are closures compiled once per bundle; reading allocates nothing but the string form of
 * a number feature read as text.
 */
export class FeatureValues {
  /** Per `<source>.<name>`: does a number stay finite in every float column that reads it? */
  private readonly fits = new Map<string, Fits>();

  /** `inputs`: every model input of the bundle, so the overflow check covers all its columns. */
  constructor(
    private readonly features: BundleSpec['features'],
    inputs: readonly ModelInputSpec[] = [],
  ) {
    const risks = new Map<string, Map<string, OverflowRisk>>();
    for (const column of inputs.flatMap((input) => input.columns)) {
      const risk = overflowRisk(column);
      if (!risk || column.op === 'cross' || column.op === 'match') continue;
      const key = `${column.feature.source}.${column.feature.name}`;
      const byMath = risks.get(key) ?? risks.set(key, new Map()).get(key)!;
      // Models sharing inputs (YAML anchors) repeat the same columns: check each math once.
      byMath.set(JSON.stringify(risk), risk);
    }
    for (const [key, byMath] of risks) this.fits.set(key, fitsAll([...byMath.values()]));
  }

  /** The feature as a number: for number ops (bucketize, identity, log1p, standardize). */
  number(ref: FeatureRef): NumberReader {
    if (isImplicitId(ref)) return idNumber(ref);
    const decl = this.declaration(ref);
    const fits = this.fits.get(`${ref.source}.${ref.name}`);
    const read = decl.type === 'number' ? numberValue(fits) : numericText(fits);
    // A string feature's default need not be numeric: it reads as 0, as it always has.
    return layered(ref, read, Number(decl.default) || 0);
  }

  /** The feature's string form: for string ops (hash, cross, match). */
  text(ref: FeatureRef): TextReader {
    if (isImplicitId(ref)) {
      return ref.source === 'item' ? (f, i) => f.itemIds[i] : (f) => f.userId;
    }
    const decl = this.declaration(ref);
    if (decl.type === 'string') return layered(ref, textOf, String(decl.default));
    // A number feature hashes as the string form of its resolved number: "20.0", 20 -> "20".
    const asNumber = numberValue(this.fits.get(`${ref.source}.${ref.name}`));
    const read = (v: FeatureValue) => {
      const n = asNumber(v);
      return n === undefined ? undefined : String(n);
    };
    return layered(ref, read, String(Number(decl.default)));
  }

  private declaration({ source, name }: FeatureRef): FeatureDecl {
    const decls = this.features[source];
    if (!Object.hasOwn(decls, name)) {
      throw new Error(`${source}.${name} is not declared under features.${source}`);
    }
    return decls[name];
  }
}

type Fits = (n: number) => boolean;

/** The same arithmetic as the columns (see numberMap), over typed arrays: no call per column. */
function fitsAll(risks: readonly OverflowRisk[]): Fits {
  const shift = Float64Array.from(risks, (r) => r.shift);
  const scale = Float64Array.from(risks, (r) => r.scale);
  const lo = Float64Array.from(risks, (r) => r.lo);
  const hi = Float64Array.from(risks, (r) => r.hi);
  return (n) => {
    for (let k = 0; k < shift.length; k++) {
      const v = Math.min(Math.max((n - shift[k]) / scale[k], lo[k]), hi[k]);
      if (!Number.isFinite(Math.fround(v))) return false;
    }
    return true;
  };
}

function isImplicitId({ source, name }: FeatureRef): boolean {
  return name === 'id' && source !== 'context';
}

/** Numbers, numeric strings and booleans (1/0); NaN for anything else. */
function numberOf(v: FeatureValue): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string') {
    const n = Number(v);
    // Number('') and Number('  ') are 0, but a blank string is no number.
    return n === 0 && v.trim() === '' ? NaN : n;
  }
  return NaN;
}

/** Strings, and the string form of numbers and booleans; undefined for anything else. */
function textOf(v: FeatureValue): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : undefined;
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return undefined;
}

/** A usable number, or undefined; `fits` is the feature's overflow check, if it has one. */
function numberValue(fits: Fits | undefined): (v: FeatureValue) => number | undefined {
  if (!fits) {
    return (v) => {
      const n = numberOf(v);
      return Number.isFinite(n) ? n : undefined;
    };
  }
  return (v) => {
    const n = numberOf(v);
    return Number.isFinite(n) && fits(n) ? n : undefined;
  };
}

/** A string feature read by a number op: its string form, when that is a number. */
function numericText(fits: Fits | undefined): (v: FeatureValue) => number | undefined {
  const asNumber = numberValue(fits);
  return (v) => {
    const text = textOf(v);
    return text === undefined ? undefined : asNumber(text);
  };
}

/** user.id and item.id read as numbers: numeric ids as themselves, any other id as 0. */
function idNumber({ source, name }: FeatureRef): NumberReader {
  const id: Lookup = source === 'item' ? (f, i) => f.itemIds[i] : (f) => f.userId;
  return (f, i) => {
    const n = numberOf(id(f, i)!);
    if (Number.isFinite(n)) return n;
    f.onBadValue?.(source, 'request', i, name);
    return 0;
  };
}

/** The first layer whose value `read` accepts, else `fallback`; each refused value is reported. */
function layered<T>(
  { source, name }: FeatureRef,
  read: (v: FeatureValue) => T | undefined,
  fallback: T,
): (f: FeatureFrame, row: number) => T {
  const pick = (
    f: FeatureFrame,
    i: number,
    request: FeatureRow | undefined,
    stored: FeatureRow | undefined,
  ): T => {
    const sent = ownValue(request, name);
    if (sent !== undefined) {
      const value = read(sent);
      if (value !== undefined) return value;
      f.onBadValue?.(source, 'request', i, name);
    }
    const kept = ownValue(stored, name);
    if (kept !== undefined) {
      const value = read(kept);
      if (value !== undefined) return value;
      f.onBadValue?.(source, 'stored', i, name);
    }
    return fallback;
  };
  switch (source) {
    case 'item':
      return (f, i) => pick(f, i, f.itemRequest[i], f.itemStored[i]);
    case 'user':
      return (f, i) => pick(f, i, f.userRequest, f.userStored);
    case 'context':
      // Context features are never stored.
      return (f, i) => pick(f, i, f.context, undefined);
  }
}
