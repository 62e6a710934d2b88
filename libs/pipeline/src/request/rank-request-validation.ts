import { ErrorDetail, RequestInvalidError } from '@app/common';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { candidateProblems } from './rank-request-check';
import { RankRequestDto } from './rank-request.dto';
import { RankRequest } from './rank-request';
import { validationDetails } from './validation-details';

/**
 * The one validation of a rank request, shared by the HTTP and Kafka edges: the DTO with
 * class-validator, the candidate list with `candidateProblems`. Every problem is reported
 * together with its path; unknown fields are refused.
 */
export function validateRankRequest(body: unknown, maxCandidates: number): RankRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new RequestInvalidError('the body must be a JSON object', [
      { path: 'body', message: 'must be a JSON object' },
    ]);
  }
  const { candidates, ...rest } = body as Record<string, unknown>;
  const dto = plainToInstance(RankRequestDto, rest);
  const details = [
    ...validationDetails(validateSync(dto, { whitelist: true, forbidNonWhitelisted: true })),
    ...candidateProblems(candidates, maxCandidates),
  ];
  if (details.length > 0)
    throw new RequestInvalidError(`invalid request: ${summary(details)}`, details);
  return { ...dto, candidates: candidates as RankRequest['candidates'] };
}

/** The first few problems, for the message; `details` has them all. */
function summary(details: readonly ErrorDetail[]): string {
  return details
    .slice(0, 5)
    .map((d) => `${d.path}: ${d.message}`)
    .join('; ');
}
