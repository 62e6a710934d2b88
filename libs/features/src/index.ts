// The public face of the features lib: modules, the port, config, metrics, tokens and types.
// Adapters (Redis, in-memory, the item cache, the update consumers) are reached through DI only;
// specs, tools and benchmarks that need them import `@app/features/testing`.
export * from './feature-row';
export * from './feature-store.port';
export * from './features.config';
export * from './features.metrics';
export * from './features.tokens';
export * from './features.module';
export * from './updates/feature-updates.config';
export * from './updates/feature-updates.module';
