import { FeatureValue } from '@app/features';
import { BundleSpec, ColumnSpec, FeatureRef } from '../bundle/bundle-definition';
import { FeatureFrame } from './feature-frame';
import { CROSS_SEPARATOR, FNV_OFFSET_BASIS, fnv1a32 } from './feature-hash';

type RawGetter = (frame: FeatureFrame, row: number) => FeatureValue | undefined;

export interface CompiledColumn {
  /** False when the column reads only user/context features: computed once and tiled. */
  readonly perItem: boolean;
  /** True when it reads only item features: its value can be kept with the item's row. */
  readonly itemOnly: boolean;
  /** Work that depends only on user/context, done once per request before `compute`. */
  prepare?(frame: FeatureFrame): void;
  compute(frame: FeatureFrame, row: number): number;
}

/** Compiles one column spec into a closure; feature lookups and defaults are resolved here, once. */
export function compileColumn(
  column: ColumnSpec,
  features: BundleSpec['features'],
): CompiledColumn {
  const refs = column.op === 'cross' || column.op === 'match' ? column.features : [column.feature];
  const perItem = refs.some((ref) => ref.source === 'item');
  const itemOnly = refs.every((ref) => ref.source === 'item');
  const compiled = compileOp(column, features, perItem);
  return { ...compiled, perItem, itemOnly };
}

function compileOp(
  column: ColumnSpec,
  features: BundleSpec['features'],
  perItem: boolean,
): Omit<CompiledColumn, 'itemOnly'> {
  const text = (ref: FeatureRef) => stringGetter(ref, features);
  const num = (ref: FeatureRef) => numberGetter(ref, features);
  switch (column.op) {
    case 'hash': {
      const get = text(column.feature);
      const buckets = column.buckets;
      return { perItem, compute: (f, i) => fnv1a32(get(f, i)) % buckets };
    }
    case 'cross': {
      // FNV-1a is a stream: the hash of "a<sep>b" continues the hash of "a<sep>". Leading
      // user/context values are hashed once per request, and no joined string is built.
      const gets = column.features.map(text);
      const lead = column.features.findIndex((ref) => ref.source === 'item');
      const fixed = lead < 0 ? gets.length : lead;
      const { buckets } = column;
      const hashFrom = (f: FeatureFrame, i: number, start: number, seed: number) => {
        let h = seed;
        for (let j = start; j < gets.length; j++) {
          if (j > 0) h = fnv1a32(CROSS_SEPARATOR, h);
          h = fnv1a32(gets[j](f, i), h);
        }
        return h;
      };
      let prefix = FNV_OFFSET_BASIS;
      return {
        perItem,
        prepare: (f) => {
          prefix = FNV_OFFSET_BASIS;
          for (let j = 0; j < fixed; j++) {
            if (j > 0) prefix = fnv1a32(CROSS_SEPARATOR, prefix);
            prefix = fnv1a32(gets[j](f, 0), prefix);
          }
        },
        compute: (f, i) => hashFrom(f, i, fixed, prefix) % buckets,
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
