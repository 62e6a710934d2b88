import type { IContainer, IEnvVar, IProbe } from 'kubernetes-models/v1';

const QUANTITY = /^(\d+(?:\.\d+)?)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/;
const SCALE: Record<string, number> = {
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** A Kubernetes quantity ("2", "500m", "4Gi") as a number. */
export function quantity(text: string | number): number {
  const match = QUANTITY.exec(String(text));
  if (!match) throw new Error(`not a quantity: ${text}`);
  return Number(match[1]) * (match[2] ? SCALE[match[2]] : 1);
}

/** `limits.cpu` -> the container's limit for cpu, as written; undefined when it sets none. */
export function resourceOf(container: IContainer, resource: string): string | number | undefined {
  const [bound, name] = resource.split('.') as ['limits' | 'requests', string];
  return container.resources?.[bound]?.[name];
}

/**
 * The container's environment as the process sees it: literal values, and resourceFieldRef values
 * as the kubelet computes them (the resource divided by the divisor, rounded up). Values only
 * known in the cluster (secrets, config maps, pod fields) are left out.
 */
export function resolvedEnv(container: IContainer): Record<string, string> {
  const env: Record<string, string> = {};
  for (const variable of container.env ?? []) {
    const ref = variable.valueFrom?.resourceFieldRef;
    if (variable.valueFrom === undefined) env[variable.name] = variable.value ?? '';
    else if (ref) {
      const amount = resourceOf(container, ref.resource);
      if (amount === undefined) continue;
      env[variable.name] = String(Math.ceil(quantity(amount) / quantity(ref.divisor ?? '1')));
    }
  }
  return env;
}

/** Variables set more than once in the container (the last would win, silently). */
export function duplicateEnv(env: IEnvVar[] = []): string[] {
  const names = env.map((variable) => variable.name);
  return names.filter((name, i) => names.indexOf(name) !== i);
}

/** The port of each probe of the container, by probe name. */
export function probePorts(container: IContainer): Record<string, string | number> {
  const probes: Record<string, IProbe | undefined> = {
    startupProbe: container.startupProbe,
    readinessProbe: container.readinessProbe,
    livenessProbe: container.livenessProbe,
  };
  const ports: Record<string, string | number> = {};
  for (const [name, probe] of Object.entries(probes)) {
    const port = probe?.httpGet?.port ?? probe?.tcpSocket?.port ?? probe?.grpc?.port;
    if (port !== undefined) ports[name] = port;
  }
  return ports;
}

/** Whether `port` (a name or a number) is one the container declares. */
export function declaresPort(container: IContainer, port: string | number): boolean {
  return (container.ports ?? []).some((p) =>
    typeof port === 'number' ? p.containerPort === port : p.name === port,
  );
}
