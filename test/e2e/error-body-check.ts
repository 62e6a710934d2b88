/** What the fuzz specs check of an answer: the API's error body, and bodies it refuses. */

/** Content types the API refuses with 415: the body is JSON in UTF-8 or nothing. */
export const NON_JSON_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json-patch+json',
  'application/json; charset=utf-16',
  'application/xml',
  'text/json',
];

export function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether `text`, a refusal, is the API's error body: JSON with a code, a message and 1-100
 * details, each with a non-empty path; with `requestId` given, the same request id as the
 * x-request-id header. The problem, or the paths the details name.
 */
export function checkErrorBody(
  text: string,
  requestId?: string | null,
): { problem: string } | { paths: string[] } {
  let body: {
    code?: unknown;
    message?: unknown;
    details?: { path?: unknown }[];
    requestId?: unknown;
  };
  try {
    body = JSON.parse(text);
  } catch {
    return { problem: `an answer that is not JSON: ${text.slice(0, 200)}` };
  }
  const shown = text.slice(0, 300);
  if (typeof body.code !== 'string' || typeof body.message !== 'string')
    return { problem: `no code/message: ${shown}` };
  if (!Array.isArray(body.details) || body.details.length === 0)
    return { problem: `no details: ${shown}` };
  if (body.details.length > 100) return { problem: `${body.details.length} details` };
  if (!body.details.every((d) => typeof d.path === 'string' && d.path !== ''))
    return { problem: `a detail without a path: ${shown}` };
  if (requestId !== undefined && body.requestId !== requestId)
    return { problem: 'requestId differs from x-request-id' };
  return { paths: body.details.map((d) => d.path as string) };
}
