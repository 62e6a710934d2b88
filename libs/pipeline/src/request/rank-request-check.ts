import { ErrorDetail } from '@app/common';
import { featureMapProblem, MAX_ID_LENGTH } from './rank-request.dto';

/** Enough to fix a request; a list of thousands of errors helps nobody. */
const MAX_DETAILS = 50;

/**
 * Problems of a candidate list, each with its path: not a non-empty array, over the limit,
 * an entry that is not `{ id, features? }`, an id that is not a non-empty string, features
 * that are not a flat map, duplicate ids. One pass, no per-candidate allocation beyond the id
 * set.
 */
export function candidateProblems(candidates: unknown, maxCandidates: number): ErrorDetail[] {
  if (!Array.isArray(candidates))
    return [{ path: 'candidates', message: 'must be an array of { id, features? }' }];
  if (candidates.length === 0) return [{ path: 'candidates', message: 'must not be empty' }];
  if (candidates.length > maxCandidates) {
    return [
      {
        path: 'candidates',
        message: `at most ${maxCandidates} candidates per request, got ${candidates.length}`,
      },
    ];
  }
  const problems: ErrorDetail[] = [];
  const seen = new Map<string, number>();
  for (let i = 0; i < candidates.length && problems.length < MAX_DETAILS; i++) {
    const candidate = candidates[i] as { id?: unknown; features?: unknown } | null;
    if (candidate === null || typeof candidate !== 'object' || Array.isArray(candidate)) {
      problems.push({ path: `candidates[${i}]`, message: 'must be an object { id, features? }' });
      continue;
    }
    for (const key in candidate) {
      if (key !== 'id' && key !== 'features')
        problems.push({ path: `candidates[${i}].${key}`, message: 'property should not exist' });
    }
    const { id, features } = candidate;
    if (typeof id !== 'string' || id === '' || id.length > MAX_ID_LENGTH) {
      problems.push({
        path: `candidates[${i}].id`,
        message: `must be a non-empty string of at most ${MAX_ID_LENGTH} characters`,
      });
    } else {
      const first = seen.get(id);
      if (first === undefined) seen.set(id, i);
      else
        problems.push({
          path: `candidates[${i}].id`,
          message: `duplicate id '${id}' (first at candidates[${first}])`,
        });
    }
    if (features !== undefined) {
      const problem = featureMapProblem(features);
      if (problem)
        problems.push({ path: `candidates[${i}].features`, message: `features ${problem}` });
    }
  }
  return problems;
}
