export * from './errors/ranker-error';
export * from './config/typed-config';

export * from './config/kafka.config';
export * from './metrics/metrics.module';
export * from './hash/fnv1a';
export * from './logging/throttled-warnings';
export * from './numbers/count-non-finite';
