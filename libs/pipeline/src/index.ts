export * from './pipeline.module';
export * from './pipeline.config';
export * from './request/rank-request';
export * from './request/rank-request-validation';
export * from './rank/rank.service';
export * from './scene/scene-registry';
