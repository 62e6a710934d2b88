/** Unit specs sit beside the code (*.spec.ts); integration (*.int-spec.ts) and end-to-end
 * (*.e2e-spec.ts) specs live under test/. globalSetup starts Redis and Kafka when nothing
 * answers on their ports, globalTeardown stops only what it started. */
const aliases = ['common', 'features', 'scoring', 'pipeline'];
const moduleNameMapper = {};
for (const lib of aliases) {
  moduleNameMapper[`^@app/${lib}$`] = `<rootDir>/libs/${lib}/src`;
  moduleNameMapper[`^@app/${lib}/(.*)$`] = `<rootDir>/libs/${lib}/src/$1`;
}

module.exports = {
  rootDir: __dirname,
  testEnvironment: '<rootDir>/test/support/ort-test-environment.ts',
  moduleFileExtensions: ['ts', 'js', 'json'],
  testRegex: '.*\\.(spec|int-spec|e2e-spec)\\.ts$',
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  // NestJS 12 ships ES modules only; Jest's module loader does not require() them (on Node.js
  // 24.22.3 as on 20), so swc compiles @nestjs/* to CommonJS like our own sources.
  transformIgnorePatterns: ['/node_modules/(?!@nestjs/)'],
  transform: {
    '^.+\\.(ts|js|mjs)$': [
      '@swc/jest',
      {
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true },
          target: 'es2022',
          keepClassNames: true,
        },
      },
    ],
  },
  moduleNameMapper,
  globalSetup: '<rootDir>/test/services/jest-global-setup.js',
  globalTeardown: '<rootDir>/test/services/jest-global-teardown.js',
  testTimeout: 60000,
};
