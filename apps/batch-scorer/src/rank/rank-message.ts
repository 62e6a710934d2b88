import {
  ErrorDetail,
  headerText,
  MalformedJsonError,
  RankerError,
  RequestInvalidError,
} from '@app/common';
import {
  MAX_ID_LENGTH,
  parseRankBody,
  RankRequest,
  requestInvalid,
  validateRankRequest,
} from '@app/pipeline';
import type { IHeaders } from 'kafkajs';

/** Headers a rank request may carry instead of the value's `requestId` and `scene`. */
export const RANK_MESSAGE_HEADERS = { requestId: 'x-request-id', scene: 'x-scene' } as const;

/** As long as the HTTP edge lets a scene path parameter be. */
export const MAX_SCENE_LENGTH = 100;

/** Why a message is not a rank request, as the DLQ metric counts it. */
export type RefusalKind = 'empty_value' | 'not_json' | 'invalid_request';

export type ParsedRankMessage =
  | { ok: true; requestId: string; scene: string; request: RankRequest }
  | {
      ok: false;
      kind: RefusalKind;
      /** The x-dlq-reason. */
      reason: string;
      /** What the caller hears, when the message says who the caller is. */
      error: RankerError;
      requestId?: string;
    };

/**
 * The Kafka edge's one validation of a message: its value is the REST body plus `requestId` and
 * `scene` (either may come from the `x-request-id` / `x-scene` header instead; if both are given
 * they must agree). The envelope is checked here; the body itself by `validateRankRequest`, the
 * same function as the HTTP edge's, so both refuse exactly the same requests with the same paths.
 */
export function parseRankMessage(
  value: Buffer | null,
  headers: IHeaders | undefined,
  maxCandidates: number,
): ParsedRankMessage {
  const fromHeaders = {
    requestId: headerText(headers, RANK_MESSAGE_HEADERS.requestId),
    scene: headerText(headers, RANK_MESSAGE_HEADERS.scene),
  };
  const headerRequestId = validId(fromHeaders.requestId, MAX_ID_LENGTH);
  if (value === null || value.length === 0) {
    const message = 'the message value is empty';
    return refuse(
      'empty_value',
      'empty message value',
      bodyError(MalformedJsonError, message),
      headerRequestId,
    );
  }
  let body: unknown;
  try {
    body = parseRankBody(value.toString('utf8'));
  } catch (error) {
    const why = (error as Error).message;
    return refuse(
      'not_json',
      `not JSON (${why})`,
      bodyError(MalformedJsonError, `the message value is not JSON: ${why}`),
      headerRequestId,
    );
  }
  const details: ErrorDetail[] = [];
  const own = isObject(body) ? body : {};
  const requestId = envelopeField(own, 'requestId', fromHeaders.requestId, MAX_ID_LENGTH, details);
  const scene = envelopeField(own, 'scene', fromHeaders.scene, MAX_SCENE_LENGTH, details);
  let request: RankRequest | undefined;
  try {
    request = validateRankRequest(isObject(body) ? withoutEnvelope(body) : body, maxCandidates);
  } catch (error) {
    if (!(error instanceof RequestInvalidError)) throw error;
    // Without an envelope problem the validator's own error stands (a body that is no object).
    if (details.length === 0) return refuse('invalid_request', error.message, error, requestId);
    details.push(...error.details);
  }
  if (
    details.length > 0 ||
    request === undefined ||
    requestId === undefined ||
    scene === undefined
  ) {
    const error = requestInvalid(details);
    return refuse('invalid_request', error.message, error, requestId ?? headerRequestId);
  }
  return { ok: true, requestId, scene, request };
}

function refuse(
  kind: RefusalKind,
  reason: string,
  error: RankerError,
  requestId: string | undefined,
): ParsedRankMessage {
  return requestId === undefined
    ? { ok: false, kind, reason, error }
    : { ok: false, kind, reason, error, requestId };
}

function bodyError(type: typeof MalformedJsonError, message: string): RankerError {
  return new type(message, [{ path: 'body', message }]);
}

/**
 * `requestId` or `scene` from the value or its header: a non-empty string of at most `max`
 * characters, the same in both places when both are given. Problems go to `details`.
 */
function envelopeField(
  body: Record<string, unknown>,
  name: 'requestId' | 'scene',
  header: string | undefined,
  max: number,
  details: ErrorDetail[],
): string | undefined {
  const headerName = RANK_MESSAGE_HEADERS[name];
  const rule = `must be a non-empty string of at most ${max} characters`;
  const inBody = Object.hasOwn(body, name);
  if (inBody && validId(body[name], max) === undefined) {
    details.push({ path: name, message: rule });
    return undefined;
  }
  if (header !== undefined && validId(header, max) === undefined) {
    details.push({ path: `headers.${headerName}`, message: rule });
    // A bad header does not hide the value's own (valid) one: that caller still hears.
    return inBody ? (body[name] as string) : undefined;
  }
  if (inBody && header !== undefined && body[name] !== header) {
    details.push({
      path: name,
      message: `differs from the ${headerName} header (${JSON.stringify(shown(header))})`,
    });
    // The value is the request: its own requestId is the one to answer.
    return body[name] as string;
  }
  const found = inBody ? (body[name] as string) : header;
  if (found === undefined)
    details.push({ path: name, message: `is required (in the value or the ${headerName} header)` });
  return found;
}

function withoutEnvelope(body: Record<string, unknown>): Record<string, unknown> {
  if (!Object.hasOwn(body, 'requestId') && !Object.hasOwn(body, 'scene')) return body;
  // A spread copy keeps every other own key as an own data property, `__proto__` included.
  const rest = { ...body };
  delete rest.requestId;
  delete rest.scene;
  return rest;
}

function validId(value: unknown, max: number): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= max ? value : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function shown(text: string): string {
  return text.length <= 64 ? text : `${text.slice(0, 64)}...`;
}
