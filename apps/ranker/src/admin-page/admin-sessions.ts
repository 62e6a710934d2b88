import { Injectable } from '@nestjs/common';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { AdminConfig } from '../admin/admin.config';

const FORMAT = 'v1';
const VALUE = /^v1\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/;

/**
 * Sign-ins of the /admin page. A session is a cookie `v1.<expiry>.<mac>`, the mac an HMAC of
 * the expiry under a key derived from the admin token: it never holds the token, every replica
 * accepts it (replicas share the token, not a store), and changing the token ends every session.
 * Logging out clears the cookie; a copy of it stays valid until its expiry.
 */
@Injectable()
export class AdminSessions {
  /** Token comparisons hash both sides under this key, so they take the same time whatever the input. */
  private readonly compareKey = randomBytes(32);
  private readonly sessionKey: Buffer;

  constructor(private readonly config: AdminConfig) {
    this.sessionKey = createHmac('sha256', config.RANKER_ADMIN_TOKEN)
      .update('ranker admin page session')
      .digest();
  }

  get ttlSeconds(): number {
    return this.config.RANKER_ADMIN_SESSION_TTL_S;
  }

  /** True when `candidate` is the admin token, compared in constant time. */
  tokenMatches(candidate: string): boolean {
    if (!this.config.enabled) return false;
    const given = createHmac('sha256', this.compareKey).update(candidate).digest();
    const wanted = createHmac('sha256', this.compareKey)
      .update(this.config.RANKER_ADMIN_TOKEN)
      .digest();
    return timingSafeEqual(given, wanted);
  }

  /** A new session's cookie value, valid for `ttlSeconds` from `now`. */
  issue(now = Date.now()): string {
    const expiry = Math.floor(now / 1000) + this.ttlSeconds;
    return `${FORMAT}.${expiry}.${this.mac(expiry)}`;
  }

  /** True when `value` was issued under the current token and has not expired. */
  verify(value: string | undefined, now = Date.now()): boolean {
    if (!this.config.enabled || value === undefined) return false;
    const match = VALUE.exec(value);
    if (!match) return false;
    const expiry = Number(match[1]);
    if (expiry * 1000 <= now) return false;
    return timingSafeEqual(Buffer.from(match[2]), Buffer.from(this.mac(expiry)));
  }

  private mac(expiry: number): string {
    return createHmac('sha256', this.sessionKey).update(`${FORMAT}.${expiry}`).digest('base64url');
  }
}
