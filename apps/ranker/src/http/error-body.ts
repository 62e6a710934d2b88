import { ErrorDetail } from '@app/common';

/** The one error body every non-2xx answer of the HTTP app has. */
export interface ErrorBody {
  code: string;
  message: string;
  details: ErrorDetail[];
  requestId?: string;
  /** A framework's own body where it has one, e.g. the terminus report of a failed health check. */
  info?: unknown;
}
