/** Names of the secret settings, per config class prototype. */
const secrets = new WeakMap<object, Set<string>>();

/**
 * Marks a config property as a secret (a token, a password): when its value is refused at boot,
 * the error names the variable and the value's length, never the value, so a mistyped secret
 * does not end up in the logs.
 */
export function SecretSetting(): PropertyDecorator {
  return (target, key) => {
    const names = secrets.get(target) ?? new Set<string>();
    names.add(String(key));
    secrets.set(target, names);
  };
}

/** How a refused value of `config[key]` is quoted in a boot error. */
export function shownValue(config: object, key: string, value: unknown): string {
  let proto: object | null = Object.getPrototypeOf(config);
  for (; proto !== null; proto = Object.getPrototypeOf(proto)) {
    if (secrets.get(proto)?.has(key)) {
      const length = typeof value === 'string' ? value.length : String(value).length;
      return `<secret, ${length} characters>`;
    }
  }
  return JSON.stringify(value);
}
