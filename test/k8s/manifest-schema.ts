import type { KubeObject } from './manifest-files';

/**
 * Packages whose model classes carry the OpenAPI schemas: Kubernetes' own API groups, then
 * third-party CRDs (KEDA). A model lives at `<package>/<apiVersion>` under its kind's name.
 */
const MODEL_PACKAGES = ['kubernetes-models', '@kubernetes-models/keda'];

interface ModelClass {
  apiVersion: string;
  kind: string;
  new (data: object): { validate(): void };
  prototype: { validate(): void };
}

/** The model class of `apiVersion`/`kind`, or undefined when no package knows it. */
export async function modelFor(apiVersion: string, kind: string): Promise<ModelClass | undefined> {
  for (const pkg of MODEL_PACKAGES) {
    let exports: Record<string, unknown>;
    try {
      exports = (await import(`${pkg}/${apiVersion}`)) as Record<string, unknown>;
    } catch {
      continue;
    }
    const model = exports[kind] as ModelClass | undefined;
    if (model?.apiVersion === apiVersion && model.kind === kind) return model;
  }
  return undefined;
}

/**
 * What the API server would refuse in `object`: no schema for its kind, values the schema rejects
 * (types, required fields, enums, formats), and fields the schema does not know, which
 * `kubectl apply` refuses too (strict field validation) and which are mostly misspellings that
 * would otherwise vanish silently.
 */
export async function schemaProblems(object: KubeObject): Promise<string[]> {
  const model = await modelFor(object.apiVersion, object.kind);
  if (!model) return [`no schema for ${object.apiVersion} ${object.kind}`];
  const problems: string[] = [];
  try {
    new model(object).validate();
  } catch (error) {
    problems.push((error as Error).message);
  }
  return [...problems, ...unknownFields(model, object).map((path) => `unknown field ${path}`)];
}

/**
 * Fields of `object` its schema does not declare. The compiled schema validators read every
 * declared property of an object, and enumerate the keys only of maps (labels, resources, KEDA
 * metadata), so running the validator over a proxy that records reads finds the rest.
 */
function unknownFields(model: ModelClass, object: KubeObject): string[] {
  const read = new Map<object, Set<PropertyKey>>();
  const maps = new Set<object>();
  const proxies = new Map<object, object>();
  const watch = (value: unknown): unknown => {
    if (typeof value !== 'object' || value === null) return value;
    let proxy = proxies.get(value);
    if (!proxy) {
      const keys = new Set<PropertyKey>();
      read.set(value, keys);
      proxy = new Proxy(value, {
        get: (target, key, receiver) => (keys.add(key), watch(Reflect.get(target, key, receiver))),
        has: (target, key) => (keys.add(key), Reflect.has(target, key)),
        ownKeys: (target) => (maps.add(target), Reflect.ownKeys(target)),
      });
      proxies.set(value, proxy);
    }
    return proxy;
  };
  try {
    model.prototype.validate.call(watch(object));
  } catch {
    // Invalid values are reported by schemaProblems; only the reads matter here.
  }
  const unknown: string[] = [];
  const walk = (value: unknown, path: string): void => {
    if (typeof value !== 'object' || value === null) return;
    if (Array.isArray(value)) return value.forEach((item, i) => walk(item, `${path}[${i}]`));
    for (const [key, child] of Object.entries(value)) {
      const at = path === '' ? key : `${path}.${key}`;
      if (!maps.has(value) && !read.get(value)?.has(key)) unknown.push(at);
      else walk(child, at);
    }
  };
  walk(object, '');
  return unknown;
}
