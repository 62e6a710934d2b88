import { ColumnSpec } from '../bundle/bundle-definition';

/** A numeric column's value as a function of the number it reads. */
export type NumberMap = (x: number) => number;

/** The math of each op that reads one number; undefined for the string ops (hash, cross, match). */
export function numberMap(column: ColumnSpec): NumberMap | undefined {
  switch (column.op) {
    case 'bucketize': {
      const boundaries = column.boundaries;
      return (x) => {
        let b = 0;
        while (b < boundaries.length && x >= boundaries[b]) b++;
        return b;
      };
    }
    case 'identity':
      return clipped((x) => x, column.clip);
    case 'log1p': {
      const get = clipped((x) => x, column.clip);
      return (x) => Math.log1p(Math.max(get(x), 0));
    }
    case 'standardize': {
      const { mean, std } = column;
      return clipped((x) => (x - mean) / std, column.clip);
    }
    default:
      return undefined;
  }
}

/** A column that can leave float32 from a finite input: clip((x - shift) / scale). */
export interface OverflowRisk {
  shift: number;
  scale: number;
  lo: number;
  hi: number;
}

/**
 * The affine math of an identity or standardize column whose value can leave float32 from a
 * finite input (1e308 as identity, or standardized by a small std); undefined for the others:
 * bucketize counts boundaries, log1p of a finite number stays below 710, and a clip within
 * float32 bounds the value.
 */
export function overflowRisk(column: ColumnSpec): OverflowRisk | undefined {
  if (column.op !== 'identity' && column.op !== 'standardize') return undefined;
  const [lo, hi] = column.clip ?? [-Infinity, Infinity];
  if (Number.isFinite(Math.fround(lo)) && Number.isFinite(Math.fround(hi))) return undefined;
  if (column.op === 'standardize') return { shift: column.mean, scale: column.std, lo, hi };
  return { shift: 0, scale: 1, lo, hi };
}

function clipped(get: NumberMap, clip?: [number, number]): NumberMap {
  if (!clip) return get;
  const [lo, hi] = clip;
  return (x) => Math.min(Math.max(get(x), lo), hi);
}
