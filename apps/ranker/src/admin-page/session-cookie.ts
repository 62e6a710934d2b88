import type { FastifyRequest } from 'fastify';

/** The /admin page's session cookie: sent back to /admin only, never readable by scripts. */
export const SESSION_COOKIE = 'ranker_admin_session';

/** The value of cookie `name` in the request's Cookie header, if present. */
export function readCookie(request: FastifyRequest, name: string): string | undefined {
  for (const pair of (request.headers.cookie ?? '').split(';')) {
    const eq = pair.indexOf('=');
    if (eq > 0 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
  }
  return undefined;
}

/** A Set-Cookie value for the session; `Secure` whenever the caller reached us over HTTPS. */
export function sessionCookie(
  request: FastifyRequest,
  value: string,
  maxAgeSeconds: number,
): string {
  const secure = request.protocol === 'https' || request.headers['x-forwarded-proto'] === 'https';
  return [
    `${SESSION_COOKIE}=${value}`,
    'Path=/admin',
    `Max-Age=${maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Strict',
    ...(secure ? ['Secure'] : []),
  ].join('; ');
}
