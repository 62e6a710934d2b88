import { RankerError, RequestTooLargeError } from '@app/common';

/**
 * Whether a failed request is an error of the version that served it, for the canary guard: a
 * failure of the service's own (5xx, or no typed error at all) is; a caller's mistake (4xx) is
 * not, except REQUEST_TOO_LARGE: the limit it hits is the version's own (its models'
 * maxQueueRows), so a canary that refuses what stable serves is rolled back like a failing one.
 */
export function countsAgainstVersion(error: unknown): boolean {
  if (!(error instanceof RankerError)) return true;
  return error.status >= 500 || error instanceof RequestTooLargeError;
}
