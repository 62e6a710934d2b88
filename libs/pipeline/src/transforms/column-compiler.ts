import { ColumnSpec } from '../bundle/bundle-definition';
import { numberMap } from './column-math';
import { FeatureFrame } from './feature-frame';
import { CROSS_SEPARATOR, FNV_OFFSET_BASIS, fnv1a32 as fnv1a32Export } from './feature-hash';
import { FeatureValues, TextReader } from './feature-values';

// A re-exported binding is read through a getter chain on every call (tsc and swc both emit
// one); the hot path calls this local instead.
const fnv1a32 = fnv1a32Export;

export interface CompiledColumn {
  /** False when the column reads only user/context features: computed once and tiled. */
  readonly perItem: boolean;
  /** True when it reads only item features: its value can be kept with the item's row. */
  readonly itemOnly: boolean;
  /** Work that depends only on user/context, done once per request before `compute`. */
  prepare?(frame: FeatureFrame): void;
  compute(frame: FeatureFrame, row: number): number;
  /**
   * For a column mixing user/context and item features whose item part is one string (a cross
   * ending in item features, a user/item match): that string, which depends on the item alone
   * (so it can be kept with the item's row, like item-only values), and the column's value from
   * it once `prepare` ran. `signature` names the string (the item features it is made of):
   * columns with equal ones share it, across the models of a bundle too.
   */
  readonly itemKey?: { signature: string; read: TextReader };
  /**
   * With `itemKey`, after `prepare`: the column's value for each of a request's distinct keys,
   * in one loop (a closure call per cell cost several times the hashing itself).
   */
  keyValues?(keys: readonly string[]): Float64Array;
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
      /** The prefix followed by the separator: where the item part's hash starts. */
      let prefixSep = FNV_OFFSET_BASIS;
      const compiled: Omit<CompiledColumn, 'itemOnly'> = {
        perItem,
        prepare: (f) => {
          prefix = FNV_OFFSET_BASIS;
          for (let j = 0; j < fixed; j++) {
            if (j > 0) prefix = fnv1a32(CROSS_SEPARATOR, prefix);
            prefix = fnv1a32(gets[j](f, 0), prefix);
          }
          prefixSep = fnv1a32(CROSS_SEPARATOR, prefix);
        },
        compute: (f, i) => hashFrom(f, i, fixed, prefix) % buckets,
      };
      const tail = column.features.slice(fixed);
      // Leading user/context values, then item values only: the item part is the item values
      // joined by the separator, and hashing it from prefixSep is hashing the whole.
      if (fixed > 0 && tail.length > 0 && tail.every((ref) => ref.source === 'item')) {
        const tailGets = gets.slice(fixed);
        return {
          ...compiled,
          itemKey: {
            signature: tail.map((r) => `item.${r.name}`).join(','),
            read:
              tailGets.length === 1
                ? tailGets[0]
                : (f, i) => tailGets.map((get) => get(f, i)).join(CROSS_SEPARATOR),
          },
          keyValues: (keys) => {
            const out = new Float64Array(keys.length);
            for (let k = 0; k < keys.length; k++) out[k] = fnv1a32(keys[k], prefixSep) % buckets;
            return out;
          },
        };
      }
      return compiled;
    }
    case 'match': {
      const [a, b] = column.features.map((ref) => values.text(ref));
      const compute = (f: FeatureFrame, i: number) => (a(f, i) === b(f, i) ? 1 : 0);
      const sources = column.features.map((ref) => ref.source === 'item');
      if (sources[0] === sources[1]) return { perItem, compute };
      // One side user/context (read once per request), the other the item's string.
      const [fixedSide, itemSide] = sources[0] ? [b, a] : [a, b];
      const itemRef = column.features[sources[0] ? 0 : 1];
      let fixedText = '';
      return {
        perItem,
        compute,
        prepare: (f) => (fixedText = fixedSide(f, 0)),
        itemKey: { signature: `item.${itemRef.name}`, read: itemSide },
        keyValues: (keys) => Float64Array.from(keys, (key) => (key === fixedText ? 1 : 0)),
      };
    }
    default: {
      const get = values.number(column.feature);
      const map = numberMap(column);
      if (!map) throw new Error(`no math for column op ${(column as ColumnSpec).op}`);
      return { perItem, compute: (f, i) => map(get(f, i)) };
    }
  }
}
