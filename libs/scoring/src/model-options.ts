/** Execution providers in order of preference; `cpu` is always available. */
export const EXECUTION_PROVIDERS = ['tensorrt', 'cuda', 'cpu'] as const;
export type ExecutionProvider = (typeof EXECUTION_PROVIDERS)[number];

export const GRAPH_OPTIMIZATION_LEVELS = ['disabled', 'basic', 'extended', 'all'] as const;
export type GraphOptimizationLevel = (typeof GRAPH_OPTIMIZATION_LEVELS)[number];

export interface BatchingOptions {
  /** Whether rows of several requests may share a batch; off means one request per batch. */
  enabled: boolean;
  /** Largest batch sent to an instance; larger requests are split. */
  maxBatchRows: number;
  /** A batch leaves when its oldest row has waited this long, full or not. */
  maxQueueDelayMicros: number;
  /** Batch sizes to prefer (leave at once when one can be filled); empty for none. */
  preferredBatchRows: number[];
  /** Rows allowed to wait; past this new requests are refused with OverloadedError. */
  maxQueueRows: number;
  /**
   * Milliseconds the oldest waiting rows may have waited before new requests are refused with
   * OverloadedError (0: no bound, only maxQueueRows). The engine's SCORING_MAX_QUEUE_WAIT_MS.
   */
  maxQueueWaitMs: number;
}

export interface SessionOptions {
  intraOpThreads: number;
  /**
   * Most rows one onnxruntime run takes: a larger batch runs on its instance's thread as balanced
   * parts of at most this many rows, one after another (0: the whole batch in one run).
   */
  maxRunRows: number;
  graphOptimizationLevel: GraphOptimizationLevel;
  executionProviders: ExecutionProvider[];
}

export interface WarmupOptions {
  /** Batches each instance runs before it reports ready. */
  batches: number;
  rows: number;
}

export interface ModelLoadOptions {
  /** Stable id of this model version, e.g. `feed/v1/ctr`. */
  id: string;
  file: string;
  /** Metric labels; default: the id and 'unversioned'. */
  labels?: { model: string; version: string };
  /** Worker threads, each with its own session; default SCORING_DEFAULT_INSTANCES. */
  instances?: number;
  session?: Partial<SessionOptions>;
  batching?: Partial<BatchingOptions>;
  warmup?: Partial<WarmupOptions>;
  /**
   * Start the instances one after another instead of all at once: the load takes longer, but
   * never puts more than one starting thread beside the models already serving on the cores
   * (for loads while traffic runs, e.g. a new bundle version). Default false.
   */
  staggeredStart?: boolean;
}

export const DEFAULT_BATCHING: BatchingOptions = {
  enabled: true,
  maxBatchRows: 1024,
  maxQueueDelayMicros: 2000,
  preferredBatchRows: [],
  maxQueueRows: 50_000,
  maxQueueWaitMs: 0,
};

export const DEFAULT_SESSION: SessionOptions = {
  intraOpThreads: 1,
  maxRunRows: 0,
  graphOptimizationLevel: 'all',
  executionProviders: ['cpu'],
};

export const DEFAULT_WARMUP: WarmupOptions = { batches: 2, rows: 256 };

/** ModelLoadOptions with every default filled in, as the engine's parts use them. */
export interface ResolvedModelOptions {
  id: string;
  file: string;
  labels: { model: string; version: string };
  instances: number;
  session: SessionOptions;
  batching: BatchingOptions;
  warmup: WarmupOptions;
  staggeredStart: boolean;
}

export function resolveModelOptions(
  options: ModelLoadOptions,
  defaultInstances: number,
): ResolvedModelOptions {
  return {
    id: options.id,
    file: options.file,
    labels: options.labels ?? { model: options.id, version: 'unversioned' },
    instances: options.instances ?? defaultInstances,
    session: { ...DEFAULT_SESSION, ...options.session },
    batching: { ...DEFAULT_BATCHING, ...options.batching },
    warmup: { ...DEFAULT_WARMUP, ...options.warmup },
    staggeredStart: options.staggeredStart ?? false,
  };
}
