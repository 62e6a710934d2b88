import type { IScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1';
import type { IDeployment } from 'kubernetes-models/apps/v1';
import { KubeObject, loadManifests } from './manifest-files';
import { schemaProblems } from './manifest-schema';

/** The checker itself: broken variants of the real manifests must each be refused, by path. */
const manifests = loadManifests('k8s');
const byKind = (kind: string) =>
  structuredClone(manifests.find((m) => m.object.kind === kind)!.object);
const deployment = () => byKind('Deployment') as KubeObject & IDeployment;
const scaledObject = () => byKind('ScaledObject') as KubeObject & IScaledObject;

describe('schemaProblems', () => {
  it('finds none in a valid manifest', async () => {
    expect(await schemaProblems(deployment())).toEqual([]);
    expect(await schemaProblems(scaledObject())).toEqual([]);
  });

  it('refuses a value of the wrong type or a missing required field, naming its path', async () => {
    const wrongType = deployment();
    const port = wrongType.spec!.template.spec!.containers[0].ports![0];
    port.containerPort = port.name as unknown as number;
    expect(await schemaProblems(wrongType)).toEqual([
      'data/spec/template/spec/containers/0/ports/0/containerPort must be integer',
    ]);
    const missing = deployment();
    Reflect.deleteProperty(missing.spec!.template.spec!, 'containers');
    expect(await schemaProblems(missing)).toEqual([
      'data/spec/template/spec must have required property containers',
    ]);
    const noType = scaledObject();
    Reflect.deleteProperty(noType.spec.triggers[0], 'type');
    noType.spec.triggers[0].metadata.lagThreshold = 1000 as unknown as string;
    expect(await schemaProblems(noType)).toEqual([
      'data/spec/triggers/0 must have required property type, ' +
        'data/spec/triggers/0/metadata/lagThreshold must be string',
    ]);
  });

  it('refuses a kind or an API version no schema describes', async () => {
    const misspelt = { ...deployment(), kind: 'Deploymnet' };
    const retired = { ...deployment(), apiVersion: 'extensions/v1beta2' };
    const crd = { ...scaledObject(), apiVersion: 'keda.sh/v1' };
    expect(await schemaProblems(misspelt)).toEqual(['no schema for apps/v1 Deploymnet']);
    expect(await schemaProblems(retired)).toEqual(['no schema for extensions/v1beta2 Deployment']);
    expect(await schemaProblems(crd)).toEqual(['no schema for keda.sh/v1 ScaledObject']);
  });

  it('refuses every misspelt field of every manifest, but takes any key in a map', async () => {
    // Maps (to strings or quantities) take any key; everything else is a declared field.
    const MAP =
      /(^|\.)(labels|annotations|matchLabels|limits|requests)$|triggers\[\d+\]\.metadata$/;
    const isMap = (kind: string, path: string) =>
      MAP.test(path) || (kind === 'Service' && path === 'spec.selector');
    for (const { source, object } of manifests) {
      // A misspelt apiVersion or kind has no schema at all (the test above).
      const paths = fieldPaths(object).filter(
        (p) => p.length > 1 || !['apiVersion', 'kind'].includes(p[0] as string),
      );
      for (const steps of paths) {
        const broken = structuredClone(object);
        misspell(broken, steps);
        const path = display(steps);
        const expected = isMap(object.kind, display(steps.slice(0, -1)))
          ? []
          : [`unknown field ${path}x`];
        const unknown = (await schemaProblems(broken)).filter((p) => p.startsWith('unknown'));
        expect({ source, path, unknown }).toEqual({ source, path, unknown: expected });
      }
    }
  });
});

type Step = string | number;

/** The path of every field of `value`, at every depth, as steps (array indexes as numbers). */
function fieldPaths(value: unknown, steps: Step[] = []): Step[][] {
  if (typeof value !== 'object' || value === null) return [];
  if (Array.isArray(value)) return value.flatMap((item, i) => fieldPaths(item, [...steps, i]));
  return Object.entries(value).flatMap(([key, child]) => [
    [...steps, key],
    ...fieldPaths(child, [...steps, key]),
  ]);
}

/** `spec.containers[0].name`, as schemaProblems writes paths. */
function display(steps: Step[]): string {
  return steps
    .map((step, i) => (typeof step === 'number' ? `[${step}]` : i === 0 ? step : `.${step}`))
    .join('');
}

/** Renames the field at `steps` to `<name>x`, keeping its value. */
function misspell(object: object, steps: Step[]): void {
  const name = steps[steps.length - 1] as string;
  const parent = steps
    .slice(0, -1)
    .reduce<Record<Step, unknown>>(
      (node, step) => node[step] as Record<Step, unknown>,
      object as Record<Step, unknown>,
    );
  parent[`${name}x`] = parent[name];
  delete parent[name];
}
