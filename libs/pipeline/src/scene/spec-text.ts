import { ErrorDetail } from '@app/common';
import { parseDocument } from 'yaml';
import { BundleSpecReading, readBundleSpec } from '../bundle/bundle-schema';

export const PIPELINE_FILE = 'pipeline.yaml';

/** YAML aliases a pipeline.yaml may expand; a "billion laughs" bomb needs far more. */
export const MAX_YAML_ALIASES = 100;

/** pipeline.yaml read as far as it goes, or why it cannot be read at all. */
export type SpecTextReading =
  { ok: true; reading: BundleSpecReading } | { ok: false; errors: ErrorDetail[] };

/**
 * Parses pipeline.yaml's text and validates it against the schema. A syntax error names its line;
 * an alias bomb is refused before it expands. Runs in a worker thread (spec-thread.ts): the `yaml`
 * package takes seconds over a large file, which the serving thread must never wait for.
 */
export function readSpecText(text: string): SpecTextReading {
  const refuse = (message: string): SpecTextReading => ({
    ok: false,
    errors: [{ path: PIPELINE_FILE, message }],
  });
  let doc;
  try {
    doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  } catch (error) {
    return refuse(`cannot be parsed: ${(error as Error).message}`);
  }
  if (doc.errors.length > 0) {
    return {
      ok: false,
      errors: doc.errors.map((e) => ({
        path: `${PIPELINE_FILE}:${(e.linePos?.[0].line ?? 0) || '?'}`,
        message: e.message,
      })),
    };
  }
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch (error) {
    return refuse(
      `${(error as Error).message} (aliases may expand at most ${MAX_YAML_ALIASES} times)`,
    );
  }
  return { ok: true, reading: readBundleSpec(raw) };
}
