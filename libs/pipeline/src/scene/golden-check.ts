import { BundleInvalidError, ErrorDetail, RequestTooLargeError } from '@app/common';
import { ScoringEngine } from '@app/scoring';
import { Scene } from './scene';
import { checkFits, scoreScene } from './scene-scorer';
import { FeatureFrame, featureFrame, rowArray } from '../transforms/feature-frame';
import { BundleFiles } from './bundle-files';
import { GOLDEN_FILE, GoldenCase } from './golden-parts';
import { readGoldenOffThread } from './spec-thread';

export { GOLDEN_FILE } from './golden-parts';
export type { GoldenCase } from './golden-parts';

/** Enough to see what broke without drowning in a list of every row. */
const MAX_REPORTED = 20;

/**
 * Scores every request of the bundle's optional golden.jsonl and compares the fused scores with
 * the expected ones within `golden.tolerance`. Golden requests carry all their features (the
 * store is not read), so they give the same scores wherever the bundle is loaded. The file's bytes
 * go to the spec reader thread, which decodes, parses and validates them, and the cases come back
 * part by part (readGoldenOffThread), each part scored on its own: no line, however long, holds
 * the serving thread for more than a part's frame and tensors. A case is refused whole, at its
 * line, when a model's queue could never take all its candidates at once, as a request of that
 * size is.
 */
export async function checkGolden(
  scene: Scene,
  engine: ScoringEngine,
  files = new BundleFiles(scene.dir),
): Promise<number> {
  const bytes = await files.readBytes(
    GOLDEN_FILE,
    files.limits.maxGoldenBytes,
    'BUNDLES_MAX_GOLDEN_BYTES',
  );
  if (bytes === undefined) return 0;
  const errors: ErrorDetail[] = [];
  let cases = 0;
  /** The line whose remaining parts are not scored (its case already failed whole). */
  let skipped = 0;
  const parts = readGoldenOffThread(bytes);
  try {
    for (let part = await parts.next(); part; part = await parts.next()) {
      if (errors.length >= MAX_REPORTED) break;
      const path = part.line > 0 ? `${GOLDEN_FILE}:${part.line}` : GOLDEN_FILE;
      if ('error' in part) {
        errors.push({ path, message: part.error });
        continue;
      }
      if (part.line === skipped) continue;
      if (part.offset === 0) {
        cases++;
        try {
          checkFits(scene, part.total);
        } catch (error) {
          // A case the bundle's own queues can never take fails the bundle, at its line.
          if (!(error instanceof RequestTooLargeError)) throw error;
          errors.push({ path, message: error.message });
          skipped = part.line;
          continue;
        }
      }
      const { scores } = await scoreScene(scene, engine, goldenFrame(part));
      part.expected.forEach((want, c) => {
        const got = scores[c];
        if (
          !(Math.abs(got - want) <= scene.spec.golden.tolerance) &&
          errors.length < MAX_REPORTED
        ) {
          const id = part.candidates[c].id;
          const at = part.offset + c;
          errors.push({ path, message: `candidates[${at}] (${id}): expected ${want}, got ${got}` });
        }
      });
    }
  } finally {
    parts.close();
  }
  if (errors.length > 0) throw new BundleInvalidError(scene.dir, errors);
  return cases;
}

/** The frame of a golden request: its own features only, the store is not read. */
export function goldenFrame(golden: Omit<GoldenCase, 'expected'>): FeatureFrame {
  const { candidates } = golden;
  return featureFrame({
    userId: golden.user.id,
    userRequest: golden.user.features,
    userStored: undefined,
    context: golden.context,
    itemIds: rowArray(candidates.length, (r) => candidates[r].id),
    itemRequest: rowArray(candidates.length, (r) => candidates[r].features),
    itemStored: rowArray(candidates.length, () => undefined),
  });
}
