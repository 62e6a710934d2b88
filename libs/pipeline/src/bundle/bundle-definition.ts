/** The typed form of a bundle's pipeline.yaml, produced only by `parseBundleSpec`. */
import {
  BatchingOptions,
  ExecutionProvider,
  GraphOptimizationLevel,
  WarmupOptions,
} from '@app/scoring';

export type FeatureSource = 'user' | 'item' | 'context';
export type FeatureType = 'number' | 'string';

export interface FeatureDecl {
  type: FeatureType;
  default: number | string;
}

/** `user.age`, `item.id`, `context.hour`: `id` is implicit for users and items. */
export interface FeatureRef {
  source: FeatureSource;
  name: string;
}

export type ColumnSpec =
  | { op: 'hash'; feature: FeatureRef; buckets: number }
  | { op: 'cross'; features: FeatureRef[]; buckets: number }
  | { op: 'bucketize'; feature: FeatureRef; boundaries: number[] }
  | { op: 'identity' | 'log1p'; feature: FeatureRef; clip?: [number, number] }
  | { op: 'standardize'; feature: FeatureRef; mean: number; std: number; clip?: [number, number] }
  | { op: 'match'; features: [FeatureRef, FeatureRef] };

export type ColumnOp = ColumnSpec['op'];

export interface ModelInputSpec {
  name: string;
  dtype: 'float32' | 'int64';
  columns: ColumnSpec[];
}

/** How a model runs; what is absent takes the engine's defaults. */
export interface ModelRuntimeSpec {
  instances?: number;
  intraOpThreads: number;
  maxRunRows?: number;
  graphOptimizationLevel?: GraphOptimizationLevel;
  executionProviders?: ExecutionProvider[];
  batching?: Partial<BatchingOptions>;
  warmup?: Partial<WarmupOptions>;
}

export interface ModelSpec extends ModelRuntimeSpec {
  name: string;
  file: string;
  inputs: ModelInputSpec[];
  outputs: string[];
}

export interface BundleSpec {
  scene: string;
  version: string;
  description?: string;
  features: Record<FeatureSource, Record<string, FeatureDecl>>;
  models: ModelSpec[];
  /** Expression over `<model>.<output>` names, e.g. `ctr.ctr * (1 + mtl.cvr)`. */
  fusion: string;
  postprocess: { topK: number };
  golden: { tolerance: number };
}
