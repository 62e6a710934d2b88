import { Provider } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { validateSync } from 'class-validator';
import { ConfigInvalidError } from '../errors/ranker-error';

type ConfigClass<T> = new () => T;

const SECRETS = new WeakMap<object, Set<string>>();

/**
 * Marks a setting as a secret (a token, a password): a bad value is reported by its name only,
 * never printed.
 */
export function Secret(): PropertyDecorator {
  return (prototype, key) => {
    const keys = SECRETS.get(prototype) ?? new Set<string>();
    keys.add(String(key));
    SECRETS.set(prototype, keys);
  };
}

/**
 * Builds a typed, validated config object from environment variables. Every property of the class
 * is an environment variable of the same name; its initialiser is the default and its type decides
 * how the string is converted. All problems are reported together, each naming its variable.
 */
export function loadTypedConfig<T extends object>(
  cls: ConfigClass<T>,
  read: (name: string) => string | undefined,
): T {
  const config = new cls();
  const secrets = SECRETS.get(cls.prototype) ?? new Set<string>();
  const shown = (key: string, value: unknown) =>
    secrets.has(key) ? `${key}=<secret>` : `${key}=${JSON.stringify(value)}`;
  const problems: string[] = [];
  for (const key of Object.keys(config) as (keyof T & string)[]) {
    const raw = read(key);
    if (raw === undefined || raw === '') continue;
    const fallback = config[key] as unknown;
    const converted = convert(raw, fallback);
    if (converted === undefined) {
      problems.push(`${shown(key, raw)}: expected a ${typeof fallback}`);
      continue;
    }
    (config as Record<string, unknown>)[key] = converted;
  }
  for (const error of validateSync(config, { forbidUnknownValues: false })) {
    const value = (config as Record<string, unknown>)[error.property];
    problems.push(
      `${shown(error.property, value)}: ${Object.values(error.constraints ?? {}).join(', ')}`,
    );
  }
  if (problems.length > 0) {
    throw new ConfigInvalidError(
      `invalid configuration: ${problems.join('; ')}`,
      problems.map((message) => ({ message })),
    );
  }
  return config;
}

function convert(raw: string, fallback: unknown): unknown {
  switch (typeof fallback) {
    case 'number': {
      const n = Number(raw.trim());
      return raw.trim() !== '' && Number.isFinite(n) ? n : undefined;
    }
    case 'boolean':
      if (/^(true|1|yes)$/i.test(raw)) return true;
      if (/^(false|0|no)$/i.test(raw)) return false;
      return undefined;
    default:
      return raw;
  }
}

/** A provider that exposes `cls` as an injectable, validated once at boot. */
export function typedConfigProvider<T extends object>(cls: ConfigClass<T>): Provider {
  return {
    provide: cls,
    inject: [ConfigService],
    useFactory: (env: ConfigService) => loadEnvConfig(cls, env),
  };
}

/**
 * `cls` from the environment through ConfigService, for the few settings needed before the Nest
 * module exists (the HTTP adapter's body limit, the Kafka transport's options).
 */
export function loadEnvConfig<T extends object>(cls: ConfigClass<T>, env = new ConfigService()): T {
  return loadTypedConfig(cls, (name) => env.get<string>(name));
}
