import { ColumnSpec } from '../bundle/bundle-definition';
import { numberMap } from './column-math';
import { FeatureFrame } from './feature-frame';
import { CROSS_SEPARATOR, FNV_OFFSET_BASIS, fnv1a32 } from './feature-hash';
import { FeatureValues } from './feature-values';

export interface CompiledColumn {
  /** False when the column reads only user/context features: computed once and tiled. */
  readonly perItem: boolean;
  /** True when it reads only item features: its value can be kept with the item's row. */
  readonly itemOnly: boolean;
  /** Work that depends only on user/context, done once per request before `compute`. */
  prepare?(frame: FeatureFrame): void;
  compute(frame: FeatureFrame, row: number): number;
}

/**
 * Compiles one column spec into a closure over the bundle's feature readers: every value reaches
 * the op already resolved through its declared type (see FeatureValues).
 */
export function compileColumn(column: ColumnSpec, values: FeatureValues): CompiledColumn {
  const refs = column.op === 'cross' || column.op === 'match' ? column.features : [column.feature];
  const perItem = refs.some((ref) => ref.source === 'item');
  const itemOnly = refs.every((ref) => ref.source === 'item');
  const compiled = compileOp(column, values, perItem);
  return { ...compiled, perItem, itemOnly };
}

function compileOp(
  column: ColumnSpec,
  values: FeatureValues,
  perItem: boolean,
): Omit<CompiledColumn, 'itemOnly'> {
  switch (column.op) {
    case 'hash': {
      const get = values.text(column.feature);
      const buckets = column.buckets;
      return { perItem, compute: (f, i) => fnv1a32(get(f, i)) % buckets };
    }
    case 'cross': {
      // FNV-1a is a stream: the hash of "a<sep>b" continues the hash of "a<sep>". Leading
      // user/context values are hashed once per request, and no joined string is built.
      const gets = column.features.map((ref) => values.text(ref));
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
    case 'match': {
      const [a, b] = column.features.map((ref) => values.text(ref));
      return { perItem, compute: (f, i) => (a(f, i) === b(f, i) ? 1 : 0) };
    }
    default: {
      const get = values.number(column.feature);
      const map = numberMap(column);
      if (!map) throw new Error(`no math for column op ${(column as ColumnSpec).op}`);
      return { perItem, compute: (f, i) => map(get(f, i)) };
    }
  }
}
