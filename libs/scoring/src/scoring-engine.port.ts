import { InputFeeds, ModelMetadata, OutputTensors } from './tensor-types';

export interface ModelLoadOptions {
  /** Stable id of this model version, e.g. `feed/v1/ctr`. */
  id: string;
  file: string;
  intraOpThreads?: number;
}

/**
 * Runs ONNX models. The pipeline builds input tensors and hands them over; how and where
 * inference runs (threads, batching, providers) is the engine's business.
 */
export abstract class ScoringEngine {
  abstract load(options: ModelLoadOptions): Promise<ModelMetadata>;

  abstract score(modelId: string, feeds: InputFeeds): Promise<OutputTensors>;

  abstract unload(modelId: string): Promise<void>;
}
