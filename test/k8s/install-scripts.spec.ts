import { repoFile } from './manifest-files';

/**
 * Dependency install scripts are a decision of the project, written in package.json's
 * `allowScripts` (npm 11.19 and later block every unlisted one and list it after each install;
 * older npm runs them all and ignores the field). A dependency update that brings a new install
 * script fails here until someone decides about it (README: Requirements).
 */
const pkg = JSON.parse(repoFile('package.json')) as { allowScripts?: Record<string, boolean> };
const lock = JSON.parse(repoFile('package-lock.json')) as {
  packages: Record<string, { hasInstallScript?: boolean }>;
};
const nameOf = (path: string) =>
  path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
const withScripts = [
  ...new Set(
    Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && entry.hasInstallScript === true)
      .map(([path]) => nameOf(path)),
  ),
].sort();

describe('dependency install scripts', () => {
  it('has a decision for every package in the lock file that has one, and for no other', () => {
    expect(withScripts.length).toBeGreaterThan(0);
    // A key may name a version (`pkg@1.2.3`, what `npm install-scripts approve` writes).
    const decided = Object.keys(pkg.allowScripts ?? {}).map((key) =>
      key.replace(/(.)@[^@/]*$/, '$1'),
    );
    expect([...new Set(decided)].sort()).toEqual(withScripts);
    for (const decision of Object.values(pkg.allowScripts ?? {})) {
      expect(typeof decision).toBe('boolean');
    }
  });

  it("denies onnxruntime-node's, whose only work is downloading the CUDA binaries", () => {
    expect(pkg.allowScripts?.['onnxruntime-node']).toBe(false);
    // npm 10 runs it regardless; .npmrc tells it to skip the download there.
    expect(repoFile('.npmrc')).toMatch(/^onnxruntime-node-install=skip$/m);
  });
});
