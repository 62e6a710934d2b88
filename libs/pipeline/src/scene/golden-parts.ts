import { describeDetails, RequestInvalidError } from '@app/common';
import { FeatureRow } from '@app/features';
import { validateRankRequest } from '../request/rank-request-validation';

export const GOLDEN_FILE = 'golden.jsonl';

/**
 * Candidates a part of a golden case carries at most: what the serving thread takes in at once
 * (the part's structured-clone copy, its frame, its tensors) stays a millisecond or two of work
 * whatever the size of the case.
 */
export const GOLDEN_PART_CANDIDATES = 512;

export interface GoldenCase {
  user: { id: string; features?: FeatureRow };
  context?: FeatureRow;
  candidates: { id: string; features?: FeatureRow }[];
  /** Fused score of each candidate, in candidate order. */
  expected: number[];
}

/**
 * golden.jsonl as the serving thread takes it in: for each non-blank line (`line`, from 1), why
 * it is not a golden case, or the case in parts of at most GOLDEN_PART_CANDIDATES candidates
 * (`offset` of the first, the case's `total`), each with the case's user and context and the
 * expected scores of its own candidates (a valid case has at least one).
 */
export type GoldenPart =
  | { line: number; error: string }
  | {
      line: number;
      user: GoldenCase['user'];
      context: GoldenCase['context'];
      candidates: GoldenCase['candidates'];
      expected: number[];
      offset: number;
      total: number;
    };

/**
 * Parses and validates golden.jsonl one line at a time, yielding its parts. Runs in the spec
 * reader thread (spec-thread.ts): a line may hold up to BUNDLES_MAX_GOLDEN_BYTES of JSON, whose
 * parse and validation (~0.3 s for 16 MiB) the serving thread must never wait for.
 */
export function* goldenParts(text: string): Generator<GoldenPart> {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() === '') continue;
    const line = i + 1;
    const golden = parseCase(lines[i]);
    if (typeof golden === 'string') {
      yield { line, error: golden };
      continue;
    }
    const { user, context, candidates, expected } = golden;
    const total = candidates.length;
    for (let offset = 0; offset < total;) {
      const end = Math.min(total, offset + GOLDEN_PART_CANDIDATES);
      yield {
        line,
        user,
        context,
        candidates: candidates.slice(offset, end),
        expected: expected.slice(offset, end),
        offset,
        total,
      };
      offset = end;
    }
  }
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
