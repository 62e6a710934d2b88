export * from './tensor-types';
export * from './scoring-engine.port';
export * from './model-input-check';
export * from './onnx-metadata';
export * from './inline-scoring-engine';
export * from './scoring.module';
