import { ErrorDetail } from '@app/common';

type Obj = Record<string, unknown>;

/**
 * Reads untrusted YAML values while collecting every problem with its exact path
 * (`models.ctr.inputs.dense.columns[3].feature`), so a bundle author sees all errors at once.
 */
export class SpecReader {
  readonly errors: ErrorDetail[] = [];

  fail(path: string, message: string): undefined {
    this.errors.push({ path, message });
    return undefined;
  }

  object(value: unknown, path: string, allowedKeys?: readonly string[]): Obj | undefined {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      return this.fail(path, `must be a mapping, got ${describe(value)}`);
    }
    if (allowedKeys) {
      for (const key of Object.keys(value)) {
        if (!allowedKeys.includes(key))
          this.fail(join(path, key), `unknown key (allowed: ${allowedKeys.join(', ')})`);
      }
    }
    return value as Obj;
  }

  array(value: unknown, path: string, { min = 0 } = {}): unknown[] | undefined {
    if (!Array.isArray(value)) return this.fail(path, `must be a list, got ${describe(value)}`);
    if (value.length < min)
      return this.fail(path, `must have at least ${min} entr${min === 1 ? 'y' : 'ies'}`);
    return value;
  }

  string(value: unknown, path: string, pattern?: RegExp): string | undefined {
    if (typeof value !== 'string' || value === '')
      return this.fail(path, `must be a non-empty string, got ${describe(value)}`);
    if (pattern && !pattern.test(value)) return this.fail(path, `'${value}' must match ${pattern}`);
    return value;
  }

  number(
    value: unknown,
    path: string,
    { min, max, integer = false }: { min?: number; max?: number; integer?: boolean } = {},
  ): number | undefined {
    if (typeof value !== 'number' || !Number.isFinite(value))
      return this.fail(path, `must be a number, got ${describe(value)}`);
    if (integer && !Number.isInteger(value))
      return this.fail(path, `must be an integer, got ${value}`);
    if (min !== undefined && value < min) return this.fail(path, `must be >= ${min}, got ${value}`);
    if (max !== undefined && value > max) return this.fail(path, `must be <= ${max}, got ${value}`);
    return value;
  }

  oneOf<T extends string>(value: unknown, path: string, allowed: readonly T[]): T | undefined {
    if (typeof value !== 'string' || !allowed.includes(value as T)) {
      return this.fail(path, `must be one of ${allowed.join(', ')}, got ${describe(value)}`);
    }
    return value as T;
  }
}

export function join(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  // An empty key would vanish from the path (or leave it ending in a dot).
  if (key === '') return `${path}[""]`;
  return path === '' ? key : `${path}.${key}`;
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return `${typeof value} ${JSON.stringify(value)}`;
}
