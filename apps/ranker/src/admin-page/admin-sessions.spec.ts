import { loadTypedConfig } from '@app/common';
import { AdminConfig } from '../admin/admin.config';
import { AdminSessions } from './admin-sessions';

const TOKEN = 'the-admin-token-0123456789';
const sessionsFor = (token: string, ttl = '600') =>
  new AdminSessions(
    loadTypedConfig(AdminConfig, (name) =>
      name === 'RANKER_ADMIN_TOKEN'
        ? token
        : name === 'RANKER_ADMIN_SESSION_TTL_S'
          ? ttl
          : undefined,
    ),
  );

describe('AdminSessions', () => {
  const sessions = sessionsFor(TOKEN);
  const now = Date.UTC(2025, 0, 1);

  it('matches the token and nothing else', () => {
    expect(sessions.tokenMatches(TOKEN)).toBe(true);
    for (const wrong of ['', TOKEN.slice(1), `${TOKEN} `, TOKEN.toUpperCase(), `${TOKEN}${TOKEN}`])
      expect(sessions.tokenMatches(wrong)).toBe(false);
  });

  it('issues a session that holds neither the token nor anything derived without a key', () => {
    const value = sessions.issue(now);
    expect(value).toMatch(/^v1\.\d+\.[A-Za-z0-9_-]{43}$/);
    expect(value).not.toContain(TOKEN);
    expect(sessions.verify(value, now)).toBe(true);
  });

  it('accepts the session on another replica with the same token', () => {
    expect(sessionsFor(TOKEN).verify(sessions.issue(now), now)).toBe(true);
  });

  it('refuses it once expired', () => {
    const value = sessions.issue(now);
    expect(sessions.verify(value, now + 599_000)).toBe(true);
    expect(sessions.verify(value, now + 600_000)).toBe(false);
  });

  it('refuses a session of another token, a tampered one and garbage', () => {
    const value = sessions.issue(now);
    expect(sessionsFor('another-admin-token-000').verify(value, now)).toBe(false);
    const [format, expiry, mac] = value.split('.');
    const later = `${format}.${Number(expiry) + 3600}.${mac}`;
    expect(sessions.verify(later, now)).toBe(false);
    const flipped = `${format}.${expiry}.${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`;
    expect(sessions.verify(flipped, now)).toBe(false);
    for (const bad of [undefined, '', 'v1', 'v1..', `${value}x`, TOKEN, `v2.${expiry}.${mac}`])
      expect(sessions.verify(bad, now)).toBe(false);
  });

  it('accepts nothing when no token is configured', () => {
    const off = sessionsFor('');
    expect(off.tokenMatches('')).toBe(false);
    expect(off.verify(off.issue(now), now)).toBe(false);
  });
});
