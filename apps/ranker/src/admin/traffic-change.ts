import { describeDetails, ErrorDetail, RequestInvalidError } from '@app/common';

export interface TrafficChange {
  /** The traffic config: the body without `expectedRevision` and `reason`. */
  config: Record<string, unknown>;
  expectedRevision?: number;
  reason?: string;
}

const MAX_REASON = 500;
type ChangeField = 'expectedRevision' | 'reason';

/**
 * Splits an admin traffic body into the config and the change's own fields. The config itself is
 * validated by the TrafficStore (422 with every path); this only refuses what is not an object
 * and bad `expectedRevision` / `reason` (400 naming the field). With `only`, the call takes no
 * config: any other key is refused (400), and so is a field not in `only`. A body that is absent
 * is then `{}`; JSON `null` is not an absent body and is refused.
 */
export function trafficChange(
  body: unknown,
  path: string,
  { only }: { only?: readonly ChangeField[] } = {},
): TrafficChange {
  if (only && body === undefined) body = {};
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw invalid([{ path, message: 'must be a JSON object' }]);
  const fields = body as Record<string, unknown>;
  const errors: ErrorDetail[] = [];
  if (only)
    for (const key of Object.keys(fields))
      if (!only.includes(key as ChangeField))
        errors.push({
          // An empty key would leave the path empty.
          path: key === '' ? '[""]' : key,
          message: `is not a field of this call (${only.join(', ')} only)`,
        });
  const takes = (field: ChangeField) => !only || only.includes(field);
  const { expectedRevision, reason, ...config } = fields;
  if (
    takes('expectedRevision') &&
    expectedRevision !== undefined &&
    !(Number.isSafeInteger(expectedRevision) && (expectedRevision as number) >= 0)
  )
    errors.push({ path: 'expectedRevision', message: 'must be an integer >= 0' });
  if (
    takes('reason') &&
    reason !== undefined &&
    (typeof reason !== 'string' || reason.length > MAX_REASON)
  )
    errors.push({
      path: 'reason',
      message: `must be a string of at most ${MAX_REASON} characters`,
    });
  if (errors.length > 0) throw invalid(errors);
  return {
    config,
    ...(expectedRevision !== undefined && { expectedRevision: expectedRevision as number }),
    ...(reason !== undefined && { reason: reason as string }),
  };
}

const invalid = (details: ErrorDetail[]) =>
  new RequestInvalidError(`admin traffic call is invalid: ${describeDetails(details)}`, details);
