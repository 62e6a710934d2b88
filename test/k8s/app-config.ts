import 'reflect-metadata';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadTypedConfig } from '@app/common';

type ConfigClass = new () => object;
type ModuleRef = { module?: unknown; imports?: unknown[]; providers?: unknown[] } | object;

const REPO = join(__dirname, '..', '..');

/**
 * The configuration an app reads: the config classes (`*Config`, exported by the `*.config.ts`
 * files of the apps and libs) that its root module, `apps/<app>/src/<app>.module.ts`, provides
 * anywhere in its module graph. Each property of such a class is an environment variable of the
 * same name (see loadTypedConfig).
 */
export class AppConfig {
  private constructor(private readonly classes: ConfigClass[]) {}

  static async of(app: string): Promise<AppConfig> {
    const configClasses = await allConfigClasses();
    const root = await import(join(REPO, `apps/${app}/src/${app}.module.ts`));
    const rootModule = Object.entries(root as Record<string, unknown>).find(([name]) =>
      name.endsWith('Module'),
    )?.[1];
    if (!rootModule) throw new Error(`apps/${app}/src/${app}.module.ts exports no module`);
    // A root module built by forRoot (the ranker's admin modules exist only with a token) is
    // inspected with every optional part on: what it may read is what a manifest may set.
    const forRoot = (rootModule as { forRoot?: (options: object) => ModuleRef }).forRoot;
    const provided = providedTokens(
      typeof forRoot === 'function' ? forRoot({ adminEnabled: true }) : (rootModule as ModuleRef),
    );
    return new AppConfig(configClasses.filter((cls) => provided.has(cls)));
  }

  /** Every environment variable the app reads. */
  get variables(): Set<string> {
    return new Set(this.classes.flatMap((cls) => Object.keys(new cls())));
  }

  /**
   * The values the app boots with under `env` (defaults where unset), by the app's own loader:
   * a value it would refuse throws ConfigInvalidError naming the variable.
   */
  boot(env: Record<string, string>): Map<string, unknown> {
    const values = new Map<string, unknown>();
    for (const cls of this.classes) {
      const config = loadTypedConfig(cls, (name) => env[name]);
      for (const [name, value] of Object.entries(config)) values.set(name, value);
    }
    return values;
  }
}

async function allConfigClasses(): Promise<ConfigClass[]> {
  const dirs = [
    ...readdirSync(join(REPO, 'apps')).map((app) => `apps/${app}/src`),
    ...readdirSync(join(REPO, 'libs')).map((lib) => `libs/${lib}/src`),
  ];
  const classes: ConfigClass[] = [];
  for (const file of dirs.flatMap(configFiles)) {
    const exports = (await import(join(REPO, file))) as Record<string, unknown>;
    for (const [name, value] of Object.entries(exports)) {
      if (name.endsWith('Config') && typeof value === 'function')
        classes.push(value as ConfigClass);
    }
  }
  return classes;
}

function configFiles(dir: string): string[] {
  if (!existsSync(join(REPO, dir))) return [];
  return readdirSync(join(REPO, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.config.ts'))
    .map((name) => join(dir, name));
}

/** The provider tokens of a Nest module and of everything it imports, static or dynamic. */
function providedTokens(root: ModuleRef): Set<unknown> {
  const tokens = new Set<unknown>();
  const seen = new Set<unknown>();
  const visit = (ref: ModuleRef | undefined): void => {
    if (!ref || seen.has(ref)) return;
    seen.add(ref);
    const dynamic = 'module' in ref ? ref : undefined;
    const module = dynamic?.module ?? ref;
    const imports = [
      ...((Reflect.getMetadata('imports', module as object) as ModuleRef[]) ?? []),
      ...((dynamic?.imports as ModuleRef[]) ?? []),
    ];
    const providers = [
      ...((Reflect.getMetadata('providers', module as object) as unknown[]) ?? []),
      ...(dynamic?.providers ?? []),
    ];
    for (const provider of providers) {
      tokens.add(
        typeof provider === 'object' && provider && 'provide' in provider
          ? provider.provide
          : provider,
      );
    }
    if (dynamic?.module) visit(dynamic.module as ModuleRef);
    imports.forEach(visit);
  };
  visit(root);
  return tokens;
}
