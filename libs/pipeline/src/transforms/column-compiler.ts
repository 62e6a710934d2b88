import { FeatureValue } from '@app/features';
import { BundleSpec, ColumnSpec, FeatureRef } from '../bundle/bundle-spec';
import { FeatureFrame } from './feature-frame';
import { CROSS_SEPARATOR, fnv1a32 } from './feature-hash';

type RawGetter = (frame: FeatureFrame, row: number) => FeatureValue | undefined;

export interface CompiledColumn {
  /** False when the column reads only user/context features: computed once and tiled. */
  readonly perItem: boolean;
  compute(frame: FeatureFrame, row: number): number;
}

/** Compiles one column spec into a closure; feature lookups and defaults are resolved here, once. */
export function compileColumn(
  column: ColumnSpec,
  features: BundleSpec['features'],
): CompiledColumn {
  const refs = column.op === 'cross' || column.op === 'match' ? column.features : [column.feature];
  const perItem = refs.some((ref) => ref.source === 'item');
  const text = (ref: FeatureRef) => stringGetter(ref, features);
  const num = (ref: FeatureRef) => numberGetter(ref, features);
  switch (column.op) {
    case 'hash': {
      const get = text(column.feature);
      const buckets = column.buckets;
      return { perItem, compute: (f, i) => fnv1a32(get(f, i)) % buckets };
    }
    case 'cross': {
      const gets = column.features.map(text);
      const buckets = column.buckets;
      return {
        perItem,
        compute: (f, i) => fnv1a32(gets.map((g) => g(f, i)).join(CROSS_SEPARATOR)) % buckets,
      };
    }
    case 'bucketize': {
      const get = num(column.feature);
      const boundaries = column.boundaries;
      return {
        perItem,
        compute: (f, i) => {
          const v = get(f, i);
          let b = 0;
          while (b < boundaries.length && v >= boundaries[b]) b++;
          return b;
        },
      };
    }
    case 'identity':
      return { perItem, compute: clipped(num(column.feature), column.clip) };
    case 'log1p': {
      const get = clipped(num(column.feature), column.clip);
      return { perItem, compute: (f, i) => Math.log1p(Math.max(get(f, i), 0)) };
    }
    case 'standardize': {
      const get = num(column.feature);
      const { mean, std } = column;
      return { perItem, compute: clipped((f, i) => (get(f, i) - mean) / std, column.clip) };
    }
    case 'match': {
      const [a, b] = column.features.map(text);
      return { perItem, compute: (f, i) => (a(f, i) === b(f, i) ? 1 : 0) };
    }
  }
}

function clipped(get: (f: FeatureFrame, i: number) => number, clip?: [number, number]) {
  if (!clip) return get;
  const [lo, hi] = clip;
  return (f: FeatureFrame, i: number) => Math.min(Math.max(get(f, i), lo), hi);
}

function rawGetter({ source, name }: FeatureRef): RawGetter {
  if (source === 'item') {
    if (name === 'id') return (f, i) => f.itemIds[i];
    return (f, i) => f.itemRequest[i]?.[name] ?? f.itemStored[i]?.[name];
  }
  if (source === 'user') return (f) => f.user[name];
  return (f) => f.context[name];
}

function declaredDefault(ref: FeatureRef, features: BundleSpec['features']): FeatureValue {
  return ref.name === 'id' && ref.source !== 'context'
    ? ''
    : features[ref.source][ref.name].default;
}

/** Numbers, numeric strings and booleans (1/0) are numbers; anything else takes the declared default. */
function numberGetter(ref: FeatureRef, features: BundleSpec['features']) {
  const raw = rawGetter(ref);
  const fallback = Number(declaredDefault(ref, features)) || 0;
  return (f: FeatureFrame, i: number): number => {
    const v = raw(f, i);
    if (typeof v === 'number') return v;
    if (typeof v === 'boolean') return v ? 1 : 0;
    if (typeof v === 'string' && v.trim() !== '') {
      const n = Number(v);
      if (Number.isFinite(n)) return n;
    }
    if (v !== undefined) f.onBadValue?.(ref.source, i, ref.name);
    return fallback;
  };
}

function stringGetter(ref: FeatureRef, features: BundleSpec['features']) {
  const raw = rawGetter(ref);
  const fallback = String(declaredDefault(ref, features));
  return (f: FeatureFrame, i: number): string => {
    const v = raw(f, i);
    return v === undefined ? fallback : typeof v === 'string' ? v : String(v);
  };
}
