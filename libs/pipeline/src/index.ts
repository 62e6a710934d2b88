export * from './pipeline.module';
export * from './pipeline.config';
export * from './request/rank-request';
export * from './request/rank-request-validation';
export * from './rank/rank.service';
export * from './registry/scene-registry';
export * from './registry/scene-listing';
export type { VersionState } from './registry/loaded-version';
export { FOLDER_NAME as BUNDLE_FOLDER_NAME, READY_FILE } from './registry/version-folders';
