export * from './feature-row';
export * from './feature-store.port';
export * from './feature-file';
export * from './in-memory-feature-store';
export * from './features.config';
export * from './features.module';
