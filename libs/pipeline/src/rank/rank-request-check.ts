import { ErrorDetail, RequestInvalidError } from '@app/common';
import { RankRequest } from './rank-request';

/**
 * The checks that need more than the shape of a request: the candidate limit and unique ids.
 * Both transports call this through RankService, so it lives here and not in a DTO.
 */
export function checkRankRequest(request: RankRequest, maxCandidates: number): void {
  const count = request.candidates.length;
  if (count > maxCandidates) {
    throw new RequestInvalidError(`too many candidates: ${count} > ${maxCandidates}`, [
      {
        path: 'candidates',
        message: `at most ${maxCandidates} candidates per request, got ${count}`,
      },
    ]);
  }
  const seen = new Map<string, number>();
  const duplicates: ErrorDetail[] = [];
  request.candidates.forEach(({ id }, index) => {
    const first = seen.get(id);
    if (first === undefined) seen.set(id, index);
    else if (duplicates.length < 20) {
      duplicates.push({
        path: `candidates[${index}].id`,
        message: `duplicate id '${id}' (first at candidates[${first}])`,
      });
    }
  });
  if (duplicates.length > 0) throw new RequestInvalidError('duplicate candidate ids', duplicates);
}
