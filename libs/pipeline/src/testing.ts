/** For specs, benchmarks and tools only: the internals the app never reaches directly. */
export * from './bundle/bundle-definition';
export * from './scene/scene';
export * from './scene/scene-loader';
export * from './scene/scene-scorer';
export * from './scene/golden-check';
export * from './transforms/feature-frame';
export * from './rollout/traffic-file';
export * from './rollout/traffic-plan';
export * from './rollout/traffic-arbitraries';
export * from './rollout/traffic-resolution';
export * from './rollout/canary-guard';
export * from './rollout/shadow-comparison';
export * from './rollout/redis-traffic-store';
export * from './rollout/in-memory-traffic-store';
