import { Dirent, Stats } from 'node:fs';
import { lstat, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PIPELINE_FILE } from '../scene/scene-loader';

/** The completeness marker: a version folder is taken only once this file exists in it. */
export const READY_FILE = 'READY';

/**
 * Scene and version folder names. Anything else is never read, so a team stages a copy under a
 * hidden name (`.v2.incoming`) and renames it into place.
 */
export const FOLDER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** One `<BUNDLES_DIR>/<scene>/<version>/` as found on disk. */
export interface VersionFolder {
  version: string;
  dir: string;
  /** READY exists: the folder may be loaded. */
  complete: boolean;
  /** Why it is not complete. */
  incomplete?: string;
  /**
   * Names, sizes, modification times and inodes of its files (symlinks followed): a load is
   * kept only if this is the same before and after it, and a new value means the version changed.
   */
  fingerprint: string;
}

/** Thrown when a folder exists but cannot be read (permissions, I/O): nothing may be inferred. */
export class FolderUnreadableError extends Error {}

/** Scene folder names under `root`. Throws FolderUnreadableError if `root` cannot be listed. */
export async function sceneNames(root: string): Promise<string[]> {
  const entries = await list(root);
  if (!entries) throw new FolderUnreadableError(`bundles folder ${root} does not exist`);
  return folderNames(root, entries);
}

/**
 * The version folders of `<root>/<scene>`, newest first (natural order: v10 after v9); none if the
 * scene folder does not exist. Subfolders holding neither pipeline.yaml nor READY are not versions.
 */
export async function versionFolders(root: string, scene: string): Promise<VersionFolder[]> {
  const entries = await list(join(root, scene));
  if (!entries) return [];
  const names = (await folderNames(join(root, scene), entries)).sort(naturalOrder).reverse();
  const folders = await Promise.all(names.map((v) => readVersionFolder(join(root, scene, v), v)));
  return folders.filter((f): f is VersionFolder => f !== undefined);
}

/** The folder as it is now; undefined if it is gone or is not a version folder. */
export async function readVersionFolder(
  dir: string,
  version: string,
): Promise<VersionFolder | undefined> {
  const entries = await list(dir);
  if (!entries) return undefined;
  const files = new Map<string, Stats>();
  const parts: string[] = [];
  for (const entry of entries.map((e) => e.name).sort()) {
    const path = join(dir, entry);
    // A file removed between the listing and its stat is simply not part of this reading.
    const link = await lstat(path).catch(() => undefined);
    if (!link) continue;
    const target = link.isSymbolicLink() ? await stat(path).catch(() => undefined) : link;
    const info = target ?? link;
    files.set(entry, info);
    parts.push(
      `${entry}:${link.ino}:${link.mtimeMs}:${info.ino}:${info.size}:${info.mtimeMs}:${info.isDirectory() ? 'd' : 'f'}`,
    );
  }
  if (!files.has(PIPELINE_FILE) && !files.has(READY_FILE)) return undefined;
  const incomplete = whyIncomplete(files);
  return {
    version,
    dir,
    complete: incomplete === undefined,
    ...(incomplete !== undefined && { incomplete }),
    fingerprint: parts.join('\n'),
  };
}

function whyIncomplete(files: Map<string, Stats>): string | undefined {
  const ready = files.get(READY_FILE);
  if (!ready)
    return `no ${READY_FILE} file: write it last, once every other file is in place (or rename a complete folder into place)`;
  // File times are not compared with READY's: a git checkout, an image layer or `tar x` writes a
  // bundle's files in any order. A file that changes while the version loads aborts that load
  // (the folder's fingerprint is compared before and after), and a changed version is loaded
  // again as a new generation, so a late write is never served half-done.
  return undefined;
}

/**
 * The well-named subfolders among `entries`, links to folders included: a link is loaded like a
 * folder, and refused with its reason if it leads out of BUNDLES_DIR, rather than ignored.
 */
async function folderNames(dir: string, entries: Dirent[]): Promise<string[]> {
  const names: string[] = [];
  for (const entry of entries) {
    if (!FOLDER_NAME.test(entry.name)) continue;
    const isFolder =
      entry.isDirectory() ||
      (entry.isSymbolicLink() &&
        (await stat(join(dir, entry.name)).then(
          (info) => info.isDirectory(),
          () => false,
        )));
    if (isFolder) names.push(entry.name);
  }
  return names;
}

/** The entries of `dir`; undefined if it does not exist. Other errors are thrown as unreadable. */
async function list(dir: string): Promise<Dirent[] | undefined> {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw new FolderUnreadableError(`cannot list ${dir}: ${(error as Error).message}`);
  }
}

export const naturalOrder = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true });
