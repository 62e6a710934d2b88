import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

/** One Kubernetes object as written in a manifest file. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

export interface Manifest {
  /** `k8s/<file>#<document index>`, for messages. */
  source: string;
  object: KubeObject;
}

const REPO = join(__dirname, '..', '..');
/** The extensions `kubectl apply -f <dir>` reads. */
const MANIFEST_FILE = /\.(ya?ml|json)$/;

/** Every manifest file under `dir` (folders included), relative to the repository root. */
export function manifestFiles(dir = 'k8s'): string[] {
  return readdirSync(join(REPO, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => MANIFEST_FILE.test(name))
    .map((name) => join(dir, name))
    .sort();
}

/**
 * Every document of every manifest file under `dir`. A YAML syntax error, or a document that is
 * not an object with apiVersion, kind and metadata.name, throws naming its file and document;
 * empty documents (a trailing `---`) are skipped, as kubectl does.
 */
export function loadManifests(dir = 'k8s'): Manifest[] {
  return manifestFiles(dir).flatMap((file) =>
    parseAllDocuments(readFileSync(join(REPO, file), 'utf8')).flatMap((doc, index) => {
      const source = `${file}#${index}`;
      if (doc.errors.length > 0) {
        throw new Error(`${source}: ${doc.errors.map((e) => e.message).join('; ')}`);
      }
      const object = doc.toJS() as unknown;
      if (object === null || object === undefined) return [];
      if (!isKubeObject(object)) {
        throw new Error(`${source}: not a Kubernetes object (apiVersion, kind, metadata.name)`);
      }
      return [{ source, object }];
    }),
  );
}

function isKubeObject(value: unknown): value is KubeObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { apiVersion, kind, metadata } = value as Partial<KubeObject>;
  return (
    typeof apiVersion === 'string' && typeof kind === 'string' && typeof metadata?.name === 'string'
  );
}

/** The text of a file of the repository. */
export function repoFile(path: string): string {
  return readFileSync(join(REPO, path), 'utf8');
}
