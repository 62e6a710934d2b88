import { ErrorDetail, RankerError } from './ranker-error';

/** Most details an error body lists; `detailsTotal` tells how many there were. */
export const MAX_ERROR_DETAILS = 100;

/**
 * The one error body of the service, whichever edge answers: the HTTP app's non-2xx answers and
 * the batch scorer's error results carry the same fields.
 */
export interface RankerErrorBody {
  code: string;
  message: string;
  details: ErrorDetail[];
  /** Present only when `details` was cut to MAX_ERROR_DETAILS entries: how many there were. */
  detailsTotal?: number;
  /** The request the error answers (the HTTP call's x-request-id, the Kafka message's requestId). */
  requestId?: string;
  /** A framework's own body where it has one, e.g. the terminus report of a failed health check. */
  info?: unknown;
}

/**
 * The status and body of any error: a typed lib error by its own code and status, anything
 * else as a 500 INTERNAL that tells nothing of its cause (the edge logs that).
 */
export function errorBodyOf(error: unknown): [number, RankerErrorBody] {
  if (error instanceof RankerError)
    return [
      error.status,
      capErrorDetails({ code: error.code, message: error.message, details: error.details }),
    ];
  return [500, { code: 'INTERNAL', message: 'internal error', details: [] }];
}

/** At most MAX_ERROR_DETAILS details, whoever built the list; `detailsTotal` keeps the count. */
export function capErrorDetails<T extends RankerErrorBody>(body: T): T {
  if (body.details.length <= MAX_ERROR_DETAILS) return body;
  return {
    ...body,
    details: body.details.slice(0, MAX_ERROR_DETAILS),
    detailsTotal: body.details.length,
  };
}
