import { ErrorDetail } from '@app/common';
import { createHash } from 'node:crypto';
import { open, realpath, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { parseDocument } from 'yaml';
import { TrafficConfig } from './traffic-config';
import { readTrafficConfig, TrafficConfigReading } from './traffic-schema';

/** The rollout of a scene: `<BUNDLES_DIR>/<scene>/traffic.yaml`, beside its version folders. */
export const TRAFFIC_FILE = 'traffic.yaml';
/** A traffic.yaml is a few hundred bytes; anything past this is refused unread. */
export const MAX_TRAFFIC_FILE_BYTES = 64 * 1024;

/** A scene's traffic.yaml as read from disk. */
export interface TrafficFile {
  path: string;
  /** sha256 of the file's bytes: tells an override whether the file changed after it. */
  digest: string;
  /** Present only when `errors` is empty. */
  config?: TrafficConfig;
  errors: ErrorDetail[];
}

/**
 * Reads and validates `<sceneDir>/traffic.yaml` against the scene's versions; undefined when the
 * scene has none. Never throws for the file's content: a file too large, YAML that does not parse
 * (errors name the line), an alias bomb and every schema problem come back in `errors`.
 */
export async function loadTrafficFile(
  sceneDir: string,
  versions: Iterable<string>,
): Promise<TrafficFile | undefined> {
  const path = join(sceneDir, TRAFFIC_FILE);
  let bytes: Buffer;
  try {
    const refusal = await refuseUnsafe(sceneDir, path);
    if (refusal) return { path, digest: '', errors: [fileError(refusal)] };
    bytes = await readCapped(path, MAX_TRAFFIC_FILE_BYTES);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    return { path, digest: '', errors: [fileError((error as Error).message)] };
  }
  const digest = createHash('sha256').update(bytes).digest('hex');
  const reading =
    bytes.length > MAX_TRAFFIC_FILE_BYTES
      ? { errors: [fileError(`larger than ${MAX_TRAFFIC_FILE_BYTES} bytes`)] }
      : readTrafficYaml(bytes.toString('utf8'), versions);
  return { path, digest, ...reading };
}

/**
 * Parses traffic.yaml text and validates it. Strict like pipeline.yaml: one document, unique
 * keys, no unknown tags (a warning is an error here), aliases bounded by the YAML library's
 * resource-exhaustion check.
 */
export function readTrafficYaml(text: string, versions: Iterable<string>): TrafficConfigReading {
  let raw: unknown;
  try {
    const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
    const problems = [...doc.errors, ...doc.warnings];
    if (problems.length > 0) {
      return {
        errors: problems.map((e) => ({
          path: `${TRAFFIC_FILE}:${(e.linePos?.[0].line ?? 0) || '?'}`,
          message: e.message,
        })),
      };
    }
    raw = doc.toJS();
  } catch (error) {
    return { errors: [fileError((error as Error).message)] };
  }
  return readTrafficConfig(raw, versions);
}

/**
 * Why the file must not be opened, if it must not: anything but a regular file (a FIFO would
 * block the open), or a link resolving outside the scene folder (its text would be echoed in
 * YAML errors). Links inside the folder are fine: a Kubernetes ConfigMap mounts files so.
 */
async function refuseUnsafe(sceneDir: string, path: string): Promise<string | undefined> {
  if (!(await stat(path)).isFile()) return 'is not a regular file';
  const [dir, file] = await Promise.all([realpath(sceneDir), realpath(path)]);
  if (!file.startsWith(dir + sep)) return 'is a link that resolves outside the scene folder';
  return undefined;
}

/** At most `cap + 1` bytes: enough to tell a file over the cap without reading all of it. */
async function readCapped(path: string, cap: number): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(cap + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    return buffer.subarray(0, length);
  } finally {
    await handle.close();
  }
}

const fileError = (message: string): ErrorDetail => ({ path: TRAFFIC_FILE, message });
