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

/**
 * True for the ops whose value can leave float32 from a finite input (1e308 as identity, or
 * standardized by a small std). bucketize counts boundaries and log1p of a finite number stays
 * below 710, so they never overflow.
 */
export function canOverflow(column: ColumnSpec): boolean {
  return column.op === 'identity' || column.op === 'standardize';
}

function clipped(get: NumberMap, clip?: [number, number]): NumberMap {
  if (!clip) return get;
  const [lo, hi] = clip;
  return (x) => Math.min(Math.max(get(x), lo), hi);
}
