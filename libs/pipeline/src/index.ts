export * from './pipeline.module';
export * from './pipeline.config';
export * from './request/rank-request';
export * from './request/rank-request-validation';
export * from './request/rank-body-json';
export * from './rank/rank.service';
export * from './registry/scene-registry';
export * from './registry/scene-listing';
export type { SceneTraffic } from './registry/scene-rollout';
export type { TrafficChangeOptions } from './registry/scene-traffic';
export { SceneTrafficControl } from './registry/scene-traffic';
export type { VersionState } from './registry/loaded-version';
export { FOLDER_NAME as BUNDLE_FOLDER_NAME, READY_FILE } from './registry/version-folders';
// Rollout: what the app's admin API needs. The plan, the guard and the comparison are driven by
// the scene registry and the rank path inside this lib.
export * from './rollout/traffic-config';
export * from './rollout/traffic-errors';
export * from './rollout/traffic-schema';
export * from './rollout/traffic-store';
export type { TrafficResolution, TrafficSource } from './rollout/traffic-resolution';
export type { TrafficChoice, ShadowChoice } from './rollout/traffic-plan';
export type {
  GuardSnapshot,
  GuardState,
  GuardLimit,
  RollbackDecision,
} from './rollout/canary-guard';
export type { WindowStats } from './rollout/outcome-window';
export type { ShadowComparison } from './rollout/shadow-comparison';
export * from './rollout/rollout.metrics';
export * from './rollout/shadow.metrics';
