import { IsBoolean, IsIn, IsInt, Max, Min, MinLength } from 'class-validator';
import { ConfigInvalidError } from '../errors/ranker-error';
import { loadTypedConfig, Secret } from './typed-config';

class ExampleConfig {
  @IsIn(['memory', 'redis'])
  STORE = 'memory';

  @IsInt()
  @Min(1)
  @Max(65535)
  PORT = 3000;

  @Min(0)
  @Max(1)
  RATIO = 0.5;

  @IsBoolean()
  VERBOSE = false;
}

const env =
  (vars: Record<string, string | undefined>) =>
  (name: string): string | undefined =>
    vars[name];

/** The ConfigInvalidError thrown for `vars`; fails the test if none is thrown. */
function errorOf(vars: Record<string, string>): ConfigInvalidError {
  try {
    loadTypedConfig(ExampleConfig, env(vars));
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigInvalidError);
    return error as ConfigInvalidError;
  }
  throw new Error('expected loadTypedConfig to throw');
}

describe('loadTypedConfig', () => {
  it('returns an instance with every default when nothing is set', () => {
    const config = loadTypedConfig(ExampleConfig, env({}));
    expect(config).toBeInstanceOf(ExampleConfig);
    expect({ ...config }).toEqual({ STORE: 'memory', PORT: 3000, RATIO: 0.5, VERBOSE: false });
  });

  it('treats an empty variable as unset', () => {
    const config = loadTypedConfig(ExampleConfig, env({ PORT: '', STORE: '' }));
    expect(config.PORT).toBe(3000);
    expect(config.STORE).toBe('memory');
  });

  it('reads each property from the variable of the same name', () => {
    const asked: string[] = [];
    loadTypedConfig(ExampleConfig, (name) => {
      asked.push(name);
      return undefined;
    });
    expect(asked.sort()).toEqual(['PORT', 'RATIO', 'STORE', 'VERBOSE']);
  });

  it('converts numbers, trimming surrounding whitespace', () => {
    const config = loadTypedConfig(ExampleConfig, env({ PORT: ' 8080 ', RATIO: '0.25' }));
    expect(config.PORT).toBe(8080);
    expect(config.RATIO).toBe(0.25);
  });

  it.each([
    ['true', true],
    ['TRUE', true],
    ['1', true],
    ['yes', true],
    ['false', false],
    ['False', false],
    ['0', false],
    ['no', false],
  ])('converts the boolean %p to %p', (raw, value) => {
    expect(loadTypedConfig(ExampleConfig, env({ VERBOSE: raw })).VERBOSE).toBe(value);
  });

  it('keeps strings as given', () => {
    expect(loadTypedConfig(ExampleConfig, env({ STORE: 'redis' })).STORE).toBe('redis');
  });

  it.each([
    ['PORT', 'abc', 'PORT="abc": expected a number'],
    ['PORT', 'Infinity', 'PORT="Infinity": expected a number'],
    ['RATIO', '   ', 'RATIO="   ": expected a number'],
    ['VERBOSE', 'maybe', 'VERBOSE="maybe": expected a boolean'],
  ])('rejects %s=%p, naming the variable', (name, raw, message) => {
    const error = errorOf({ [name]: raw });
    expect(error.details).toEqual([{ message }]);
    expect(error.message).toBe(`invalid configuration: ${message}`);
    expect(error).toMatchObject({ code: 'CONFIG_INVALID', status: 500 });
  });

  it.each([
    ['PORT', '0', /^PORT=0: .*PORT must not be less than 1/],
    ['PORT', '80.5', /^PORT=80\.5: .*PORT must be an integer number/],
    ['RATIO', '2', /^RATIO=2: .*RATIO must not be greater than 1/],
    ['STORE', 'disk', /^STORE="disk": .*STORE must be one of the following values/],
  ])('rejects %s=%p when validation fails, naming the variable', (name, raw, message) => {
    const error = errorOf({ [name]: raw });
    expect(error.details).toHaveLength(1);
    expect(error.details[0].message).toMatch(message);
  });

  it('reports every problem together', () => {
    const error = errorOf({ PORT: 'abc', VERBOSE: 'maybe', RATIO: '7', STORE: 'disk' });
    expect(error.details).toHaveLength(4);
    const names = error.details.map((d) => d.message.split('=')[0]).sort();
    expect(names).toEqual(['PORT', 'RATIO', 'STORE', 'VERBOSE']);
    for (const name of names) expect(error.message).toContain(`${name}=`);
  });

  it('reports a conversion error once, not again as a validation error', () => {
    const error = errorOf({ PORT: 'abc' });
    expect(error.details.map((d) => d.message)).toEqual(['PORT="abc": expected a number']);
  });

  it('names a bad secret without printing its value', () => {
    class WithSecret {
      @Secret()
      @MinLength(16)
      TOKEN = 'a-default-token-long-enough';

      @Secret()
      @IsInt()
      PIN = 0;
    }
    let error: unknown;
    try {
      loadTypedConfig(WithSecret, env({ TOKEN: 'hunter2', PIN: 'hunter3' }));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigInvalidError);
    const message = (error as Error).message;
    expect(message).toContain(
      'TOKEN=<secret>: TOKEN must be longer than or equal to 16 characters',
    );
    expect(message).toContain('PIN=<secret>: expected a number');
    expect(message).not.toContain('hunter');
  });
});
