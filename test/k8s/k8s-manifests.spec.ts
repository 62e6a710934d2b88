import { existsSync } from 'node:fs';
import { join, posix } from 'node:path';
import type { IScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1';
import type { IDeployment } from 'kubernetes-models/apps/v1';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import type { IContainer, IService } from 'kubernetes-models/v1';
import { scriptNodeFlags, splitNodeCommand } from '../support/node-flags';
import { AppConfig } from './app-config';
import { imageLayout, inImage } from './image-layout';
import { KubeObject, loadManifests, repoFile } from './manifest-files';
import { schemaProblems } from './manifest-schema';
import { declaresPort, duplicateEnv, probePorts, resolvedEnv, resourceOf } from './pod-spec';

/**
 * Every manifest under k8s/ (folders and multi-document files included) against the Kubernetes and
 * KEDA schemas, and against each other, the image (k8s/Dockerfile) and the apps' configuration:
 * what `kubectl apply` would accept and what would still break in the cluster.
 */
const manifests = loadManifests('k8s');
const layout = imageLayout(repoFile('k8s/Dockerfile'));
const named = <T>(kind: string) =>
  manifests
    .filter((m) => m.object.kind === kind)
    .map((m) => [`${m.source} ${m.object.metadata.name}`, m.object as KubeObject & T] as const);
const deployments = named<IDeployment>('Deployment');
const containers = deployments.flatMap(([where, d]) =>
  d.spec!.template.spec!.containers.map((c) => [`${where} ${c.name}`, c] as const),
);
const deployment = (name: string) => deployments.find(([, d]) => d.metadata.name === name)?.[1];

/** The setting each app takes its listening port from (HTTP API, or metrics and health). */
const LISTEN_PORT: Record<string, string> = {
  ranker: 'PORT',
  'batch-scorer': 'BATCH_METRICS_PORT',
};

/** The npm script that starts each app outside Kubernetes. */
const START_SCRIPT: Record<string, string> = {
  ranker: 'start',
  'batch-scorer': 'start:batch-scorer',
};

/**
 * A container's command (given or the image's default): `node [--options] <script>`, split into
 * the options and the script.
 */
function nodeCommandOf(container: IContainer): { flags: string[]; script: string } {
  const command = [...(container.command ?? layout.cmd), ...(container.args ?? [])];
  const split = splitNodeCommand(command);
  if (split === undefined) throw new Error(`not a node command: ${command}`);
  return { flags: split.flags, script: split.entry };
}

/** The app a container runs: `node [--options] dist/apps/<app>/src/main.js`. */
function appOf(container: IContainer): string {
  const { script } = nodeCommandOf(container);
  const app = /^dist\/apps\/([^/]+)\/src\/main\.js$/.exec(script)?.[1];
  if (!app) throw new Error(`not an app's entry point: ${script}`);
  return app;
}

/** The setting `name` the container's app boots with under the container's environment. */
async function bootSettings(container: IContainer): Promise<(name: string) => unknown> {
  const values = (await AppConfig.of(appOf(container))).boot(resolvedEnv(container));
  return (name) => {
    if (!values.has(name)) throw new Error(`${appOf(container)} reads no ${name}`);
    return values.get(name);
  };
}

describe('k8s/ manifests', () => {
  it('include both apps, the ranker Service and the two autoscaler alternatives', () => {
    const found = manifests.map((m) => `${m.object.kind}/${m.object.metadata.name}`);
    expect(found).toEqual(
      expect.arrayContaining([
        'Deployment/ranker',
        'Service/ranker',
        'Deployment/ranker-batch-scorer',
        'ScaledObject/ranker-batch-scorer',
        'HorizontalPodAutoscaler/ranker-batch-scorer',
      ]),
    );
  });

  it('match the Kubernetes and KEDA schemas, with no unknown field', async () => {
    const problems: string[] = [];
    for (const { source, object } of manifests) {
      for (const problem of await schemaProblems(object)) problems.push(`${source}: ${problem}`);
    }
    expect(problems).toEqual([]);
  });

  describe.each(deployments)('Deployment %s', (_, d) => {
    it('selects its own pods', () => {
      expect(d.spec!.selector.matchExpressions).toBeUndefined();
      expect(d.spec!.template.metadata?.labels).toMatchObject(d.spec!.selector.matchLabels ?? {});
      expect(Object.keys(d.spec!.selector.matchLabels ?? {})).not.toHaveLength(0);
    });
  });

  describe.each(containers)('container %s', (_, container) => {
    it('runs an app the image builds and contains', () => {
      const app = appOf(container);
      expect(existsSync(join(__dirname, '..', '..', `apps/${app}/src/main.ts`))).toBe(true);
      const packageJson = JSON.parse(repoFile('package.json')) as { scripts: { build: string } };
      expect(packageJson.scripts.build.split('&&').map((s) => s.trim())).toContain(
        `nest build ${app}`,
      );
      const { script } = nodeCommandOf(container);
      expect(inImage(layout, posix.resolve(layout.workdir, script))).toBe(true);
    });

    it('runs its app with the node options of its npm start script', () => {
      const app = appOf(container);
      expect(START_SCRIPT[app]).toBeDefined();
      expect(nodeCommandOf(container).flags).toEqual(scriptNodeFlags(START_SCRIPT[app]));
    });

    it('probes ports it declares, and the image exposes them', () => {
      for (const port of Object.values(probePorts(container))) {
        expect({ port, declared: declaresPort(container, port) }).toEqual({ port, declared: true });
      }
      const names = (container.ports ?? []).map((p) => p.name);
      expect(new Set(names).size).toBe(names.length);
      for (const { containerPort } of container.ports ?? []) {
        expect([...layout.exposed]).toContain(containerPort);
      }
    });

    it('listens on the port its probes, ports and scrape annotation point at', async () => {
      const port = (await bootSettings(container))(LISTEN_PORT[appOf(container)]);
      const number = (p: string | number) =>
        typeof p === 'number'
          ? p
          : container.ports?.find((declared) => declared.name === p)?.containerPort;
      for (const probed of Object.values(probePorts(container))) expect(number(probed)).toBe(port);
      for (const { containerPort } of container.ports ?? []) expect(containerPort).toBe(port);
      const pod = deployments.find(([, d]) =>
        d.spec!.template.spec!.containers.includes(container),
      )!;
      const scraped = pod[1].spec!.template.metadata?.annotations?.['prometheus.io/port'];
      if (scraped !== undefined) expect(Number(scraped)).toBe(port);
    });

    it('sets only variables its app reads, each once, to values the app boots with', async () => {
      const read = (await AppConfig.of(appOf(container))).variables;
      const unread = (container.env ?? []).map((e) => e.name).filter((name) => !read.has(name));
      expect(unread).toEqual([]);
      expect(duplicateEnv(container.env)).toEqual([]);
      await expect(bootSettings(container)).resolves.toBeInstanceOf(Function);
    });

    it('takes resource values only from resources it sets (else the node would stand in)', () => {
      for (const { name, valueFrom } of container.env ?? []) {
        const ref = valueFrom?.resourceFieldRef;
        if (!ref) continue;
        expect({ name, containerName: ref.containerName ?? container.name }).toEqual({
          name,
          containerName: container.name,
        });
        expect({ name, [ref.resource]: resourceOf(container, ref.resource) }).toEqual({
          name,
          [ref.resource]: expect.anything(),
        });
      }
    });

    it('finds its bundles inside the image', async () => {
      const dir = (await bootSettings(container))('BUNDLES_DIR') as string;
      expect(inImage(layout, posix.resolve(layout.workdir, dir))).toBe(true);
    });
  });

  describe.each(named<IService>('Service'))('Service %s', (_, service) => {
    it('routes to the pods of a Deployment, on a port they declare', () => {
      const selector = service.spec!.selector ?? {};
      const pods = deployments
        .map(([, d]) => d.spec!.template)
        .filter((t) => Object.entries(selector).every(([k, v]) => t.metadata?.labels?.[k] === v));
      expect(Object.keys(selector)).not.toHaveLength(0);
      expect(pods).toHaveLength(1);
      for (const { targetPort, port } of service.spec!.ports ?? []) {
        const target = targetPort ?? port;
        expect(pods[0].spec!.containers.some((c) => declaresPort(c, target))).toBe(true);
      }
    });
  });
});

describe('the two apps', () => {
  /** Settings that must agree for the worker to score exactly as the HTTP app does. */
  const SHARED = [
    'BUNDLES_DIR',
    'FEATURE_STORE',
    'REDIS_URL',
    'REDIS_CLUSTER_NODES',
    'FEATURES_REDIS_KEY_PREFIX',
    'FEATURES_REDIS_SLOT_BUCKETS',
    'RANK_MAX_CANDIDATES',
    'KAFKA_BROKERS',
  ];

  it('read the same bundles and features, from the same stores', async () => {
    const settings = async (name: string) => {
      const setting = await bootSettings(deployment(name)!.spec!.template.spec!.containers[0]);
      return Object.fromEntries(SHARED.map((key) => [key, setting(key)]));
    };
    expect(await settings('ranker-batch-scorer')).toEqual(await settings('ranker'));
  });
});

/**
 * The batch scorer's autoscalers: KEDA's ScaledObject and the plain HPA, alternatives kept apart
 * in k8s/autoscaling/ so that `kubectl apply -f k8s/` applies neither and nobody applies both.
 */
describe('batch scorer autoscaling', () => {
  const [[, keda]] = named<IScaledObject>('ScaledObject');
  const [[, hpa]] = named<IHorizontalPodAutoscaler>('HorizontalPodAutoscaler');
  const worker = deployment(keda.spec.scaleTargetRef.name)!;
  const workerContainer = worker?.spec!.template.spec!.containers[0];
  const partitions = Number(worker?.metadata?.annotations?.['ranker/input-topic-partitions']);
  const [trigger] = keda.spec.triggers;
  const lag = hpa.spec!.metrics![0].external!;

  it('are the only autoscalers, one of each kind, in k8s/autoscaling/', () => {
    const autoscalers = manifests.filter((m) =>
      ['ScaledObject', 'HorizontalPodAutoscaler'].includes(m.object.kind),
    );
    expect(autoscalers.map((m) => posix.dirname(m.source))).toEqual([
      'k8s/autoscaling',
      'k8s/autoscaling',
    ]);
    expect(autoscalers.map((m) => m.object.kind).sort()).toEqual([
      'HorizontalPodAutoscaler',
      'ScaledObject',
    ]);
  });

  it("target the worker's Deployment, which leaves its replica count to them", () => {
    expect(worker).toBeDefined();
    expect(workerContainer.command).toContain('dist/apps/batch-scorer/src/main.js');
    for (const ref of [keda.spec.scaleTargetRef, hpa.spec!.scaleTargetRef]) {
      expect(ref).toEqual({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: 'ranker-batch-scorer',
      });
    }
    // A replica count in the Deployment would be reset by every `kubectl apply`.
    expect(worker.spec!.replicas).toBeUndefined();
  });

  it("scale between 1 and the input topic's partition count", () => {
    expect(Number.isInteger(partitions) && partitions > 0).toBe(true);
    const { minReplicaCount, maxReplicaCount } = keda.spec;
    expect(minReplicaCount).toBeGreaterThanOrEqual(1);
    expect(maxReplicaCount).toBeGreaterThanOrEqual(minReplicaCount!);
    expect(maxReplicaCount).toBeLessThanOrEqual(partitions);
    expect([hpa.spec!.minReplicas, hpa.spec!.maxReplicas]).toEqual([
      minReplicaCount,
      maxReplicaCount,
    ]);
  });

  it("watch the lag of the worker's own group on its input topic, at its brokers", async () => {
    const setting = await bootSettings(workerContainer);
    expect(trigger.type).toBe('kafka');
    expect(trigger.metadata).toMatchObject({
      bootstrapServers: setting('KAFKA_BROKERS'),
      consumerGroup: setting('BATCH_SCORER_GROUP_ID'),
      topic: setting('BATCH_INPUT_TOPIC'),
    });
    expect(lag.metric.selector?.matchLabels).toEqual({
      consumergroup: setting('BATCH_SCORER_GROUP_ID'),
      topic: setting('BATCH_INPUT_TOPIC'),
    });
  });

  it("use only the KEDA kafka scaler's parameters, and never scale past the partitions", () => {
    const unknown = Object.keys(trigger.metadata).filter((key) => !KEDA_KAFKA_PARAMETERS.has(key));
    expect(unknown).toEqual([]);
    expect(trigger.metadata.allowIdleConsumers ?? 'false').toBe('false');
    expect(trigger.metadata.lagThreshold).toMatch(/^[1-9]\d*$/);
  });

  it('aim at the same lag per worker and change replicas at the same pace', () => {
    expect(lag.target).toEqual({
      type: 'AverageValue',
      averageValue: trigger.metadata.lagThreshold,
    });
    expect(hpa.spec!.behavior).toEqual(keda.spec.advanced?.horizontalPodAutoscalerConfig?.behavior);
  });

  it("give the worker's drain its whole budget before the pod is killed", async () => {
    const drainMs = (await bootSettings(workerContainer))('BATCH_SHUTDOWN_GRACE_MS') as number;
    const podGraceMs = (worker.spec!.template.spec!.terminationGracePeriodSeconds ?? 30) * 1000;
    // Room after the drain for the process to close its clients and exit.
    expect(podGraceMs).toBeGreaterThanOrEqual(drainMs + 5000);
  });
});

/**
 * The kafka scaler's trigger parameters (keda.sh/docs/2.13/scalers/apache-kafka/): the CRD types
 * `metadata` as a string map, so a misspelt key would pass the schema and be ignored by KEDA.
 */
const KEDA_KAFKA_PARAMETERS = new Set([
  'bootstrapServers',
  'consumerGroup',
  'topic',
  'lagThreshold',
  'activationLagThreshold',
  'offsetResetPolicy',
  'allowIdleConsumers',
  'scaleToZeroOnInvalidOffset',
  'excludePersistentLag',
  'limitToPartitionsWithLag',
  'partitionLimitation',
  'version',
  'sasl',
  'tls',
  'unsafeSsl',
]);
