import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { repoFile } from './manifest-files';

/**
 * One Node.js line for the image and for everything the npm scripts run (service, tests,
 * benchmarks): package.json pins it as the optional dependency `node-<platform>-<arch>` (the
 * official binaries on the npm registry), whose `node` npm puts first on every script's PATH. A
 * platform without such a package runs the scripts on the machine's own Node.js, which should be
 * 22 or later (README: some dependencies declare it).
 */
const pkg = JSON.parse(repoFile('package.json')) as {
  optionalDependencies?: Record<string, string>;
};
const pins = Object.entries(pkg.optionalDependencies ?? {}).filter(([name]) =>
  /^node-(linux|darwin|win)-/.test(name),
);
const major = (version: string) => version.split('.')[0];

describe('the pinned Node.js runtime', () => {
  it('is one version on every platform that has a pin', () => {
    expect(pins.length).toBeGreaterThan(0);
    expect(new Set(pins.map(([, version]) => version)).size).toBe(1);
    // An exact version: a range would let two machines run different builds.
    for (const [, version] of pins) expect(version).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('runs these tests where this platform has a pin', () => {
    const own = `node-${process.platform}-${process.arch}`;
    const pinned = pkg.optionalDependencies?.[own];
    if (pinned === undefined) return;
    // npm ci installed it (the package's os and cpu match), and npm ran this on its binary.
    expect(existsSync(join(__dirname, '..', '..', 'node_modules', own, 'bin', 'node'))).toBe(true);
    expect(process.versions.node).toBe(pinned);
  });

  it("is the line of the image's Node.js, and the image does not carry it", () => {
    const dockerfile = repoFile('k8s/Dockerfile');
    const from = [...dockerfile.matchAll(/^FROM\s+node:(\d+)\b/gim)].map((m) => m[1]);
    expect(from.length).toBeGreaterThan(0);
    for (const line of from) expect(line).toBe(major(pins[0][1]));
    // The image has its own node: the pinned binary (~190 MB) is pruned with the dev tools.
    expect(dockerfile).toMatch(/npm prune --omit=dev --omit=optional/);
  });

  it('is the only optional package the service could lose to that prune', () => {
    const lock = JSON.parse(repoFile('package-lock.json')) as {
      packages: Record<string, { optional?: boolean; dev?: boolean }>;
    };
    const optional = Object.entries(lock.packages)
      .filter(([, entry]) => entry.optional === true && entry.dev !== true)
      .map(([path]) => path);
    expect(optional.sort()).toEqual(pins.map(([name]) => `node_modules/${name}`).sort());
  });
});
