import {
  BundleInvalidError,
  describeDetails,
  ErrorDetail,
  RequestInvalidError,
  RequestTooLargeError,
} from '@app/common';
import { FeatureRow } from '@app/features';
import { ScoringEngine } from '@app/scoring';
import { validateRankRequest } from '../request/rank-request-validation';
import { Scene } from './scene';
import { scoreScene } from './scene-scorer';
import { FeatureFrame, featureFrame, rowArray } from '../transforms/feature-frame';
import { BundleFiles } from './bundle-files';

export const GOLDEN_FILE = 'golden.jsonl';

/** Enough to see what broke without drowning in a list of every row. */
const MAX_REPORTED = 20;

export interface GoldenCase {
  user: { id: string; features?: FeatureRow };
  context?: FeatureRow;
  candidates: { id: string; features?: FeatureRow }[];
  /** Fused score of each candidate, in candidate order. */
  expected: number[];
}

/**
 * Scores every request of the bundle's optional golden.jsonl and compares the fused scores with
 * the expected ones within `golden.tolerance`. Golden requests carry all their features (the
 * store is not read), so they give the same scores wherever the bundle is loaded.
 */
export async function checkGolden(
  scene: Scene,
  engine: ScoringEngine,
  files = new BundleFiles(scene.dir),
): Promise<number> {
  const text = await files.readText(
    GOLDEN_FILE,
    files.limits.maxGoldenBytes,
    'BUNDLES_MAX_GOLDEN_BYTES',
  );
  if (text === undefined) return 0;
  const errors: ErrorDetail[] = [];
  let cases = 0;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length && errors.length < MAX_REPORTED; i++) {
    if (lines[i].trim() === '') continue;
    const path = `${GOLDEN_FILE}:${i + 1}`;
    const golden = parseCase(lines[i]);
    if (typeof golden === 'string') {
      errors.push({ path, message: golden });
      continue;
    }
    cases++;
    let scores: Float32Array;
    try {
      ({ scores } = await scoreScene(scene, engine, goldenFrame(golden)));
    } catch (error) {
      // A case the bundle's own queues can never take fails the bundle, at its line.
      if (!(error instanceof RequestTooLargeError)) throw error;
      errors.push({ path, message: error.message });
      continue;
    }
    golden.expected.forEach((want, c) => {
      const got = scores[c];
      if (!(Math.abs(got - want) <= scene.spec.golden.tolerance) && errors.length < MAX_REPORTED) {
        const id = golden.candidates[c].id;
        errors.push({ path, message: `candidates[${c}] (${id}): expected ${want}, got ${got}` });
      }
    });
  }
  if (errors.length > 0) throw new BundleInvalidError(scene.dir, errors);
  return cases;
}

/** The case, or why the line is not one. */
function parseCase(line: string): GoldenCase | string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return 'not JSON';
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return 'not a JSON object';
  // A golden case is a rank request plus its expected scores, checked by the same rules.
  const request: Record<string, unknown> = { ...value };
  delete request.expected;
  try {
    validateRankRequest(request, Number.MAX_SAFE_INTEGER);
  } catch (error) {
    if (!(error instanceof RequestInvalidError)) throw error;
    return describeDetails(error.details);
  }
  const golden = value as GoldenCase;
  const candidates = golden.candidates as GoldenCase['candidates'];
  const expected = golden.expected;
  if (
    !Array.isArray(expected) ||
    expected.length !== candidates.length ||
    !expected.every(Number.isFinite)
  ) {
    return 'expected must be one finite score per candidate';
  }
  return golden as GoldenCase;
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
