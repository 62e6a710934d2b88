import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

/**
 * The house's import rule (DESIGN.md): apps -> pipeline -> {features, scoring} -> common, through
 * each lib's barrel (`@app/<lib>`) only; specs, benchmarks and tools may also use a lib's
 * `@app/<lib>/testing` entry. Inside libs/pipeline the folders form a stack too:
 * rank -> registry -> scene -> rollout -> transforms -> request -> bundle -> fusion, each importing
 * only those below it.
 * ESLint's own no-restricted-imports carries the rule (one config block per area, since a later
 * block replaces the rule's options rather than adding to them).
 */
const LIBS = ['common', 'features', 'scoring', 'pipeline'];
/** What each lib may import besides itself. */
const LIB_DEPS = {
  common: [],
  features: ['common'],
  scoring: ['common'],
  pipeline: ['common', 'features', 'scoring'],
};
const PIPELINE_STACK = [
  'rank',
  'registry',
  'scene',
  'rollout',
  'transforms',
  'request',
  'bundle',
  'fusion',
];

const noClimbingOut = [
  {
    regex: '^(\\.\\./)+(libs|apps|common|features|scoring|pipeline)(/|$)',
    message:
      'Import another lib through its alias (@app/<lib>), never a relative path out of a lib.',
  },
];

/** End-to-end specs start the apps themselves, from their sources. */
const noClimbingIntoLibs = [
  {
    regex: '^(\\.\\./)+(libs|common|features|scoring|pipeline)(/|$)',
    message: 'Import a lib through its alias (@app/<lib>), never a relative path into it.',
  },
];

function restrict(
  files,
  { forbiddenLibs = [], deep = 'all', folders = [], climbing = noClimbingOut },
) {
  const patterns = [...climbing];
  for (const lib of forbiddenLibs) {
    patterns.push({
      group: [`@app/${lib}`, `@app/${lib}/*`],
      message: `This layer may not import @app/${lib} (apps -> pipeline -> {features, scoring} -> common).`,
    });
  }
  patterns.push(
    deep === 'all'
      ? {
          group: ['@app/*/*'],
          message: "Import a lib through its barrel (@app/<lib>); its internals aren't public.",
        }
      : {
          group: ['@app/*/*', '!@app/*/testing'],
          message: 'Specs and tools may use @app/<lib> and @app/<lib>/testing only.',
        },
  );
  for (const folder of folders) {
    patterns.push({
      group: [`../${folder}/*`, `../${folder}`],
      message: `libs/pipeline folders form a stack (${PIPELINE_STACK.join(' -> ')}); import only folders below.`,
    });
  }
  return { files, rules: { 'no-restricted-imports': ['error', { patterns }] } };
}

/** Specs, and the programs a spec runs in a process of its own (`*.spec-child.ts`). */
const TESTS = ['**/*.spec.ts', '**/*.spec-child.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts'];
const forbiddenFor = (lib) =>
  LIBS.filter((other) => other !== lib && !LIB_DEPS[lib].includes(other));
/** Each area twice: its sources, then its specs (which may also use testing entries). */
const areas = [
  ...LIBS.map((lib) => ({ dir: `libs/${lib}`, forbiddenLibs: forbiddenFor(lib) })),
  ...PIPELINE_STACK.map((folder, i) => ({
    dir: `libs/pipeline/src/${folder}`,
    forbiddenLibs: forbiddenFor('pipeline'),
    folders: PIPELINE_STACK.slice(0, i),
  })),
];
const boundaries = [
  restrict(['apps/**/*.ts'], {}),
  ...areas.map(({ dir, ...rule }) => restrict([`${dir}/**/*.ts`], rule)),
  ...areas.map(({ dir, ...rule }) =>
    restrict(
      TESTS.map((t) => `${dir}/${t}`),
      { ...rule, deep: 'testing' },
    ),
  ),
  restrict(['apps/**/*.spec.ts'], { deep: 'testing' }),
  restrict(['test/**/*.ts', 'models/**/*.ts'], { deep: 'testing', climbing: noClimbingIntoLibs }),
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.services/**', 'coverage/**', '**/*.js', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  ...boundaries,
);
