import { BundleInvalidError, ErrorDetail } from '@app/common';
import { parseFusion } from '../fusion/fusion-parser';
import {
  BundleSpec,
  ColumnSpec,
  FeatureDecl,
  FeatureRef,
  FeatureSource,
  ModelInputSpec,
  ModelSpec,
} from './bundle-definition';
import { MODEL_RUNTIME_KEYS, readModelRuntime } from './model-runtime-schema';
import { join, SpecReader } from './spec-reader';

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const VERSION = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const SOURCES: readonly FeatureSource[] = ['user', 'item', 'context'];
const INT_OPS = ['hash', 'cross', 'bucketize'] as const;
const FLOAT_OPS = ['identity', 'log1p', 'standardize', 'match', 'bucketize'] as const;
const MAX_BUCKETS = 2 ** 31 - 1;

/** A pipeline.yaml read as far as it goes: the spec, with defaults where a value was bad. */
export interface BundleSpecReading {
  spec: BundleSpec;
  /** Every problem found, with its path; empty when the spec is valid. */
  errors: ErrorDetail[];
}

/**
 * Validates a parsed pipeline.yaml into a BundleSpec. Every problem is reported with its path;
 * `where` names the bundle in the error.
 */
export function parseBundleSpec(raw: unknown, where: string): BundleSpec {
  const { spec, errors } = readBundleSpec(raw);
  if (errors.length > 0) throw new BundleInvalidError(where, errors);
  return spec;
}

/**
 * Reads a parsed pipeline.yaml without stopping at the first bad section, so the loader can still
 * check the models whose own sections are sound and report every problem of a bundle at once.
 */
export function readBundleSpec(raw: unknown): BundleSpecReading {
  const r = new SpecReader();
  const root =
    r.object(raw, '', [
      'scene',
      'version',
      'description',
      'features',
      'models',
      'fusion',
      'postprocess',
      'golden',
    ]) ?? {};
  const scene = r.string(root.scene, 'scene', VERSION) ?? '';
  const version = r.string(root.version, 'version', VERSION) ?? '';
  const description =
    root.description === undefined ? undefined : r.string(root.description, 'description');
  const features = readFeatures(r, root.features);
  const models = readModels(r, root.models, features);
  const fusion = readFusion(r, root.fusion, models);
  const post =
    root.postprocess === undefined
      ? {}
      : (r.object(root.postprocess, 'postprocess', ['topK']) ?? {});
  const topK =
    post.topK === undefined
      ? 100
      : (r.number(post.topK, 'postprocess.topK', { min: 1, integer: true }) ?? 100);
  const golden =
    root.golden === undefined ? {} : (r.object(root.golden, 'golden', ['tolerance']) ?? {});
  const tolerance =
    golden.tolerance === undefined
      ? 1e-4
      : (r.number(golden.tolerance, 'golden.tolerance', { min: 0 }) ?? 1e-4);

  const spec: BundleSpec = {
    scene,
    version,
    description,
    features,
    models,
    fusion,
    postprocess: { topK },
    golden: { tolerance },
  };
  return { spec, errors: r.errors };
}

function readFeatures(r: SpecReader, value: unknown): BundleSpec['features'] {
  const out: BundleSpec['features'] = { user: {}, item: {}, context: {} };
  const root = value === undefined ? {} : (r.object(value, 'features', SOURCES) ?? {});
  for (const source of SOURCES) {
    if (root[source] === undefined) continue;
    const decls = r.object(root[source], `features.${source}`) ?? {};
    for (const [name, declValue] of Object.entries(decls)) {
      const path = `features.${source}.${name}`;
      if (!NAME.test(name)) r.fail(path, `feature name must match ${NAME}`);
      // Assigning it would replace the declarations' prototype instead of declaring a feature.
      if (name === '__proto__') {
        r.fail(path, `'__proto__' is reserved`);
        continue;
      }
      if (name === 'id' && source !== 'context')
        r.fail(path, `'id' is implicit for ${source} features`);
      const decl = readFeatureDecl(r, declValue, path);
      if (decl) out[source][name] = decl;
    }
  }
  return out;
}

function readFeatureDecl(r: SpecReader, value: unknown, path: string): FeatureDecl | undefined {
  const obj = r.object(value, path, ['type', 'default']);
  if (!obj) return undefined;
  const type = r.oneOf(obj.type, join(path, 'type'), ['number', 'string'] as const);
  if (!type) return undefined;
  const fallback =
    type === 'number'
      ? r.number(obj.default, join(path, 'default'))
      : stringDefault(r, obj.default, join(path, 'default'));
  return fallback === undefined ? undefined : { type, default: fallback };
}

function stringDefault(r: SpecReader, value: unknown, path: string): string | undefined {
  if (typeof value !== 'string') return r.fail(path, 'must be a string (may be empty)');
  return value;
}

function readModels(r: SpecReader, value: unknown, features: BundleSpec['features']): ModelSpec[] {
  const root = r.object(value, 'models');
  if (!root) return [];
  if (Object.keys(root).length === 0) r.fail('models', 'must declare at least one model');
  const models: ModelSpec[] = [];
  for (const [name, modelValue] of Object.entries(root)) {
    const path = `models.${name}`;
    if (!NAME.test(name)) r.fail(path, `model name must match ${NAME}`);
    const obj = r.object(modelValue, path, ['file', 'inputs', 'outputs', ...MODEL_RUNTIME_KEYS]);
    if (!obj) continue;
    const file = r.string(obj.file, `${path}.file`, /^[^/\\]+\.onnx$/) ?? '';
    const inputsObj = r.object(obj.inputs, `${path}.inputs`) ?? {};
    const inputs: ModelInputSpec[] = [];
    for (const [inputName, inputValue] of Object.entries(inputsObj)) {
      const input = readInput(r, inputName, inputValue, `${path}.inputs.${inputName}`, features);
      if (input) inputs.push(input);
    }
    const outputs = (r.array(obj.outputs, `${path}.outputs`, { min: 1 }) ?? []).map(
      (o, i) => r.string(o, `${path}.outputs[${i}]`, NAME) ?? '',
    );
    models.push({ name, file, inputs, outputs, ...readModelRuntime(r, obj, path) });
  }
  return models;
}

function readInput(
  r: SpecReader,
  name: string,
  value: unknown,
  path: string,
  features: BundleSpec['features'],
): ModelInputSpec | undefined {
  const obj = r.object(value, path, ['dtype', 'columns']);
  if (!obj) return undefined;
  const dtype = r.oneOf(obj.dtype, `${path}.dtype`, ['float32', 'int64'] as const);
  const columnValues = r.array(obj.columns, `${path}.columns`, { min: 1 }) ?? [];
  const allowed: readonly string[] = dtype === 'int64' ? INT_OPS : FLOAT_OPS;
  const columns: ColumnSpec[] = [];
  columnValues.forEach((columnValue, i) => {
    const column = readColumn(r, columnValue, `${path}.columns[${i}]`, features, allowed);
    if (column) columns.push(column);
  });
  return dtype ? { name, dtype, columns } : undefined;
}

function readColumn(
  r: SpecReader,
  value: unknown,
  path: string,
  features: BundleSpec['features'],
  allowed: readonly string[],
): ColumnSpec | undefined {
  const obj = r.object(value, path);
  if (!obj) return undefined;
  const op = r.oneOf(obj.op, `${path}.op`, allowed);
  const ref = (key: string, v: unknown = obj[key]) => readRef(r, v, join(path, key), features);
  const clip = () => (obj.clip === undefined ? undefined : readClip(r, obj.clip, `${path}.clip`));
  const keys = (...allowedKeys: string[]) => r.object(obj, path, ['op', ...allowedKeys]);
  const buckets = () =>
    r.number(obj.buckets, `${path}.buckets`, { min: 1, max: MAX_BUCKETS, integer: true });
  switch (op) {
    case 'hash': {
      keys('feature', 'buckets');
      const [feature, n] = [ref('feature'), buckets()];
      return feature && n ? { op, feature, buckets: n } : undefined;
    }
    case 'cross': {
      keys('features', 'buckets');
      const list = (r.array(obj.features, `${path}.features`, { min: 2 }) ?? []).map((v, i) =>
        ref(`features[${i}]`, v),
      );
      const n = buckets();
      return n && list.length >= 2 && list.every(Boolean)
        ? { op, features: list as FeatureRef[], buckets: n }
        : undefined;
    }
    case 'bucketize': {
      keys('feature', 'boundaries');
      const feature = ref('feature');
      const boundaries = (r.array(obj.boundaries, `${path}.boundaries`, { min: 1 }) ?? []).map(
        (v, i) => r.number(v, `${path}.boundaries[${i}]`),
      );
      if (
        boundaries.some(
          (b, i) =>
            i > 0 &&
            b !== undefined &&
            boundaries[i - 1] !== undefined &&
            b <= (boundaries[i - 1] as number),
        )
      ) {
        r.fail(`${path}.boundaries`, 'must be strictly increasing');
      }
      return feature && boundaries.length > 0 && boundaries.every((b) => b !== undefined)
        ? { op, feature, boundaries: boundaries as number[] }
        : undefined;
    }
    case 'identity':
    case 'log1p': {
      keys('feature', 'clip');
      const feature = ref('feature');
      return feature ? { op, feature, clip: clip() } : undefined;
    }
    case 'standardize': {
      keys('feature', 'mean', 'std', 'clip');
      const feature = ref('feature');
      const mean = r.number(obj.mean, `${path}.mean`);
      const std = r.number(obj.std, `${path}.std`);
      if (std === 0) r.fail(`${path}.std`, 'must not be 0');
      return feature && mean !== undefined && std
        ? { op, feature, mean, std, clip: clip() }
        : undefined;
    }
    case 'match': {
      keys('features');
      const list = (r.array(obj.features, `${path}.features`, { min: 2 }) ?? []).map((v, i) =>
        ref(`features[${i}]`, v),
      );
      if (list.length !== 2) return r.fail(`${path}.features`, 'must name exactly two features');
      return list[0] && list[1] ? { op, features: [list[0], list[1]] } : undefined;
    }
    default:
      return undefined;
  }
}

function readRef(
  r: SpecReader,
  value: unknown,
  path: string,
  features: BundleSpec['features'],
): FeatureRef | undefined {
  const text = r.string(value, path);
  if (!text) return undefined;
  const [source, name, ...rest] = text.split('.');
  if (rest.length > 0 || !name || !SOURCES.includes(source as FeatureSource)) {
    return r.fail(path, `'${text}' must be <user|item|context>.<feature>`);
  }
  const src = source as FeatureSource;
  const implicitId = name === 'id' && src !== 'context';
  // Own properties only: `user.constructor` is not declared just because objects have one.
  if (!implicitId && !Object.hasOwn(features[src], name))
    return r.fail(path, `'${text}' is not declared under features.${src}`);
  return { source: src, name };
}

function readClip(r: SpecReader, value: unknown, path: string): [number, number] | undefined {
  const list = r.array(value, path, { min: 2 });
  if (!list || list.length !== 2) return r.fail(path, 'must be [min, max]');
  const [lo, hi] = [r.number(list[0], `${path}[0]`), r.number(list[1], `${path}[1]`)];
  if (lo === undefined || hi === undefined) return undefined;
  if (lo > hi) return r.fail(path, 'min must be <= max');
  return [lo, hi];
}

function readFusion(r: SpecReader, value: unknown, models: ModelSpec[]): string {
  const text = r.string(value, 'fusion');
  if (!text) return '';
  const known = new Set(models.flatMap((m) => m.outputs.map((o) => `${m.name}.${o}`)));
  try {
    const { variables } = parseFusion(text);
    for (const name of variables) {
      if (!known.has(name))
        r.fail('fusion', `'${name}' is not a model output (known: ${[...known].join(', ')})`);
    }
  } catch (error) {
    r.fail('fusion', (error as Error).message);
  }
  return text;
}
