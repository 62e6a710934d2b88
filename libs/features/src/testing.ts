// `@app/features/testing`: the adapters behind the public face, for specs, tools and benchmarks
// that build or inspect them directly. Application code imports `@app/features` only.
export * from './feature-file';
export * from './in-memory-feature-store';
export * from './cache/item-cache';
export * from './redis/feature-blob';
export * from './redis/redis-keys';
export * from './redis/redis-connection';
export * from './redis/redis-feature-store';
export * from './redis/redis-feature-writer';
export * from './redis/wrong-type-check';
export * from './updates/feature-update';
export * from './updates/feature-update-writer';
export * from './updates/feature-cache-refresher';
export * from './updates/feature-updates-lifecycle';
