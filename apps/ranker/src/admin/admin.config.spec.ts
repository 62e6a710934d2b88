import { ConfigInvalidError, loadTypedConfig } from '@app/common';
import { AdminConfig } from './admin.config';

const load = (vars: Record<string, string>) => loadTypedConfig(AdminConfig, (name) => vars[name]);

describe('AdminConfig', () => {
  it('is disabled when no token is set', () => {
    expect(load({}).enabled).toBe(false);
    expect(load({ RANKER_ADMIN_TOKEN: '' }).enabled).toBe(false);
  });

  it('takes a token of 16 or more visible characters', () => {
    const config = load({
      RANKER_ADMIN_TOKEN: 'abcdefghijklmnop',
      RANKER_ADMIN_SESSION_TTL_S: '600',
    });
    expect(config.enabled).toBe(true);
    expect(config.RANKER_ADMIN_SESSION_TTL_S).toBe(600);
  });

  it.each([
    ['too short', 'hunter2hunter2', /RANKER_ADMIN_TOKEN=<secret>: .*longer than or equal to 16/],
    ['with a space', 'correct horse battery', /RANKER_ADMIN_TOKEN=<secret>: .*visible ASCII/],
    ['non-ASCII', 'pässwörtpässwörtpässwört', /RANKER_ADMIN_TOKEN=<secret>: .*visible ASCII/],
  ])(
    'refuses a token %s at boot, naming the variable but not the value',
    (_name, token, message) => {
      let error: unknown;
      try {
        load({ RANKER_ADMIN_TOKEN: token });
      } catch (thrown) {
        error = thrown;
      }
      expect(error).toBeInstanceOf(ConfigInvalidError);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toContain(token);
    },
  );

  it('refuses a session lifetime under a minute', () => {
    expect(() => load({ RANKER_ADMIN_SESSION_TTL_S: '5' })).toThrow(/RANKER_ADMIN_SESSION_TTL_S=5/);
  });
});
