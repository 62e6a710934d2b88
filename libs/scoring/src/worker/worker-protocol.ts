import { SessionOptions, WarmupOptions } from '../model-options';
import { InputDtype, ModelMetadata } from '../tensor-types';

/** workerData of a model thread: what it is whatever model it serves. */
export interface WorkerBoot {
  /** Nice value the thread sets on itself as it starts (0: leave it). */
  nice: number;
}

/** The model a thread serves, sent in its `init` message. */
export interface WorkerInit {
  file: string;
  session: SessionOptions;
  warmup: WarmupOptions;
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

/**
 * A thread starts without a model (`booted`); `init` gives it one (`ready` or `init-failed`),
 * then it takes `run`s; `release` ends its session (`released`) and it may take `init` again.
 */
export type ToWorker =
  | { type: 'init'; init: WorkerInit }
  | { type: 'run'; batchId: number; feeds: Record<string, WireTensor> }
  | { type: 'release' };

export type FromWorker =
  | { type: 'booted' }
  | { type: 'released' }
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
