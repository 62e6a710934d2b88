import { cp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parse, stringify } from 'yaml';

/** The example bundle every live-bundle spec copies. */
export const EXAMPLE_BUNDLE = resolve(__dirname, '../../models/feed/v1');

// pipeline.yaml as plain data, loosely typed: each spec edits what it needs.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type BundleYaml = Record<string, any>;

export interface VersionOptions {
  /** Edits pipeline.yaml (and may change files in the folder) before the version is complete. */
  edit?: (yaml: BundleYaml, dir: string) => unknown;
  /** Write READY last (default true). */
  ready?: boolean;
  /**
   * `mv` (default): build it under a hidden name beside its final place and rename it in, as the
   * README tells teams to; `in-place`: copy straight into the final folder.
   */
  via?: 'mv' | 'in-place';
  from?: string;
}

/**
 * Writes `<root>/<scene>/<version>/` from the example bundle, with `scene` and `version` set in its
 * pipeline.yaml, the way a team ships one. Resolves with the folder.
 */
export async function writeVersion(
  root: string,
  scene: string,
  version: string,
  options: VersionOptions = {},
): Promise<string> {
  const staged = await stageVersion(root, scene, version, options);
  await staged.publish();
  return staged.dir;
}

/** A version built but not yet in place (with `via: 'mv'`): `publish()` renames it in. */
export interface StagedVersion {
  dir: string;
  publish(): Promise<void>;
}

/** writeVersion's first half: everything but the final rename, for specs that time the swap. */
export async function stageVersion(
  root: string,
  scene: string,
  version: string,
  { edit, ready = true, via = 'mv', from = EXAMPLE_BUNDLE }: VersionOptions = {},
): Promise<StagedVersion> {
  const dir = join(root, scene, version);
  const build = via === 'mv' ? join(root, scene, `.${version}.incoming`) : dir;
  await cp(from, build, { recursive: true });
  await rm(join(build, 'READY'), { force: true });
  const file = join(build, 'pipeline.yaml');
  const yaml = parse(await readFile(file, 'utf8')) as BundleYaml;
  yaml.scene = scene;
  yaml.version = version;
  await edit?.(yaml, build);
  await writeFile(file, stringify(yaml));
  if (ready) await writeFile(join(build, 'READY'), '');
  return { dir, publish: () => (via === 'mv' ? rename(build, dir) : Promise.resolve()) };
}
