import { SessionOptions, WarmupOptions } from '../model-options';
import { InputDtype, ModelMetadata } from '../tensor-types';

/** workerData of a model worker. */
export interface WorkerInit {
  file: string;
  session: SessionOptions;
  warmup: WarmupOptions;
  /** Nice value the thread sets on itself before creating its session (0: leave it). */
  nice: number;
}

/**
 * A tensor as it crosses threads: a whole plain ArrayBuffer, transferred, never copied. The
 * tensor is the first product(dims) elements: a batch's input buffer may be longer (see
 * TensorBufferPool).
 */
export interface WireTensor {
  dtype: InputDtype;
  buffer: ArrayBuffer;
  dims: number[];
}

export type ToWorker = { type: 'run'; batchId: number; feeds: Record<string, WireTensor> };

export type FromWorker =
  | {
      type: 'ready';
      provider: string;
      metadata: ModelMetadata;
      warmupMs: number;
      skipped: string[];
    }
  | {
      type: 'init-failed';
      code: 'MODEL_LOAD_FAILED' | 'EXECUTION_PROVIDER_UNAVAILABLE';
      message: string;
    }
  | {
      type: 'result';
      batchId: number;
      outputs: Record<string, WireTensor>;
      computeMs: number;
      /** The batch's input buffers, transferred back to be used again. */
      inputs: ArrayBuffer[];
    }
  | { type: 'run-failed'; batchId: number; message: string };
