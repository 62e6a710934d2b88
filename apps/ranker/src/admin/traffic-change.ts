import { ErrorDetail, RequestInvalidError } from '@app/common';

export interface TrafficChange {
  /** The traffic config: the body without `expectedRevision` and `reason`. */
  config: Record<string, unknown>;
  expectedRevision?: number;
  reason?: string;
}

const MAX_REASON = 500;

/**
 * Splits an admin traffic body into the config and the change's own fields. The config itself is
 * validated by the TrafficStore (422 with every path); this only refuses what is not an object
 * and bad `expectedRevision` / `reason` (400 naming the field).
 */
export function trafficChange(
  body: unknown,
  path: string,
  { configAllowed = true } = {},
): TrafficChange {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw invalid([{ path, message: 'must be a JSON object' }]);
  const { expectedRevision, reason, ...config } = body as Record<string, unknown>;
  const errors: ErrorDetail[] = [];
  if (
    expectedRevision !== undefined &&
    !(Number.isSafeInteger(expectedRevision) && (expectedRevision as number) >= 0)
  )
    errors.push({ path: 'expectedRevision', message: 'must be an integer >= 0' });
  if (reason !== undefined && (typeof reason !== 'string' || reason.length > MAX_REASON))
    errors.push({
      path: 'reason',
      message: `must be a string of at most ${MAX_REASON} characters`,
    });
  if (!configAllowed)
    for (const key of Object.keys(config))
      errors.push({ path: key, message: 'is not a field of this call (reason only)' });
  if (errors.length > 0) throw invalid(errors);
  return {
    config,
    ...(expectedRevision !== undefined && { expectedRevision: expectedRevision as number }),
    ...(reason !== undefined && { reason: reason as string }),
  };
}

const invalid = (details: ErrorDetail[]) =>
  new RequestInvalidError(
    `admin traffic call is invalid: ${details.map((d) => `${d.path}: ${d.message}`).join('; ')}`,
    details,
  );
