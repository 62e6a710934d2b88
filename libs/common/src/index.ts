export * from './errors/ranker-error';
export * from './config/typed-config';
