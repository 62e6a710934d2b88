import { MinLength } from 'class-validator';
import { ConfigInvalidError } from '../errors/ranker-error';
import { SecretSetting } from './secret-setting';
import { loadTypedConfig } from './typed-config';

class WithSecret {
  @SecretSetting()
  @MinLength(16)
  API_TOKEN = 'a-default-long-enough';

  @MinLength(3)
  NAME = 'abc';
}

function problemsOf(vars: Record<string, string>): string[] {
  try {
    loadTypedConfig(WithSecret, (name) => vars[name]);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigInvalidError);
    return (error as ConfigInvalidError).details.map((d) => d.message);
  }
  throw new Error('expected loadTypedConfig to throw');
}

describe('SecretSetting', () => {
  it('names a refused secret and its length, never its value', () => {
    const [problem] = problemsOf({ API_TOKEN: 'hunter2' });
    expect(problem).toMatch(/^API_TOKEN=<secret, 7 characters>: .*longer than or equal to 16/);
    expect(problem).not.toContain('hunter2');
  });

  it('leaves other settings quoted as they are', () => {
    expect(problemsOf({ NAME: 'x' })).toEqual([
      expect.stringMatching(/^NAME="x": NAME must be longer/),
    ]);
  });

  it('keeps the marking of a subclass', () => {
    class Derived extends WithSecret {}
    expect(() =>
      loadTypedConfig(Derived, (n) => (n === 'API_TOKEN' ? 'short' : undefined)),
    ).toThrow(/API_TOKEN=<secret, 5 characters>/);
  });
});
