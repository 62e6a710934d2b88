/** For specs, benchmarks and tools only: the internals the app never reaches directly. */
export * from './bundle/bundle-definition';
export * from './scene/scene';
export * from './scene/scene-loader';
export * from './scene/scene-scorer';
export * from './scene/golden-check';
export * from './transforms/feature-frame';
