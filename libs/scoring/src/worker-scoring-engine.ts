import { Inject, Injectable, Logger, OnApplicationShutdown, Optional } from '@nestjs/common';
import { countNonFinite, lowerHelperThreads, QueueDepth } from '@app/common';
import { DynamicBatcher } from './batching/dynamic-batcher';
import { TensorBufferPool } from './batching/tensor-buffer-pool';
import { checkFeeds } from './model-input-check';
import { ModelLoadOptions, resolveModelOptions } from './model-options';
import { applyOrtTelemetry } from './ort-telemetry';
import { LoadedModelInfo, ScoreOptions, ScoringEngine } from './scoring-engine.port';
import { ScoringConfig } from './scoring.config';
import { ScoringMetrics } from './scoring.metrics';
import { InputFeeds, ModelMetadata, OutputTensors } from './tensor-types';
import { CoreBudget } from './worker/core-budget';
import { InstancePool } from './worker/instance-pool';
import { ThreadReserve } from './worker/thread-reserve';

interface LoadedModel {
  pool: InstancePool;
  batcher: DynamicBatcher;
  metadata: ModelMetadata;
}

/**
 * The service's engine: every model runs in worker threads (one onnxruntime session each) fed
 * by its own dynamic batcher; the event-loop thread only assembles tensors and moves buffers.
 * One core budget is shared by every model's pool. Bound to ScoringEngine by ScoringModule;
 * not exported from the lib's barrel (tests reach it through `@app/scoring/testing`).
 */
@Injectable()
export class WorkerScoringEngine extends ScoringEngine implements OnApplicationShutdown {
  private readonly logger = new Logger(WorkerScoringEngine.name);
  private readonly models = new Map<string, LoadedModel>();
  private readonly budget: CoreBudget;
  /** Batch input buffers, shared by every model's batcher. */
  private readonly buffers: TensorBufferPool;
  /** Started model threads with no model, shared by every model's pool. */
  private readonly threads: ThreadReserve;

  constructor(
    private readonly config: ScoringConfig,
    @Optional() @Inject(ScoringMetrics) private readonly metrics?: ScoringMetrics,
  ) {
    super();
    // Before any model thread loads onnxruntime (the reserve fills at boot).
    applyOrtTelemetry(config.SCORING_ORT_TELEMETRY);
    this.budget = new CoreBudget(config.SCORING_MAX_CONCURRENT_BATCHES);
    this.buffers = new TensorBufferPool(config.SCORING_BUFFER_POOL_MB * 2 ** 20, (result) =>
      metrics?.bufferTakes.inc({ result }),
    );
    this.threads = new ThreadReserve(
      config.SCORING_SPARE_THREADS,
      config.SCORING_WORKER_NICE,
      (source) => metrics?.threadTakes.inc({ source }),
      (idle) => metrics?.spareThreads.set(idle),
    );
  }

  async load(options: ModelLoadOptions): Promise<LoadedModelInfo> {
    // Before the load's own work: the threads it wakes (V8 compiling and marking for the new
    // version, libuv reading its files, the bundle reader thread) go below the serving model
    // threads, never above them. Threads started since the last load are caught here.
    const workerNice = this.config.SCORING_WORKER_NICE;
    lowerHelperThreads(helperNice(workerNice), workerNice);
    const full = resolveModelOptions(
      {
        ...options,
        batching: { maxQueueWaitMs: this.config.SCORING_MAX_QUEUE_WAIT_MS, ...options.batching },
      },
      this.config.SCORING_DEFAULT_INSTANCES,
    );
    const labels = full.labels;
    const pool = new InstancePool(
      full,
      () => this.metrics?.workerRestarts.inc(labels),
      this.budget,
      this.threads,
    );
    const batcher = new DynamicBatcher(
      options.id,
      full.batching,
      pool,
      this.events(labels),
      this.buffers,
    );
    let started;
    try {
      started = await pool.start();
    } catch (error) {
      await batcher.close();
      throw error;
    }
    const { metadata, provider } = started;
    const previous = this.models.get(options.id);
    this.models.set(options.id, { pool, batcher, metadata });
    if (previous) await this.close(previous);
    // A load with nothing serving beside it (at boot) also starts the spare threads, so that a
    // version loaded later beside traffic takes started threads instead of starting its own.
    if (!full.staggeredStart) await this.threads.fill();
    return { metadata, provider, maxRequestRows: full.batching.maxQueueRows };
  }

  score(modelId: string, feeds: InputFeeds, options: ScoreOptions = {}): Promise<OutputTensors> {
    const model = this.models.get(modelId);
    if (!model) return Promise.reject(new Error(`model ${modelId} is not loaded`));
    try {
      checkFeeds(modelId, model.metadata, feeds);
    } catch (error) {
      return Promise.reject(error);
    }
    const rows = Object.values(feeds)[0]?.dims[0] ?? 0;
    // Nothing to batch: a 0-row request would otherwise reach the batcher as an empty batch.
    if (rows === 0) return Promise.resolve(emptyOutputs(model.metadata));
    return model.batcher.submit(feeds, rows, options.deadline);
  }

  admit(modelId: string, rows: number): void {
    const model = this.models.get(modelId);
    if (!model) throw new Error(`model ${modelId} is not loaded`);
    if (rows > 0) model.batcher.admit(rows);
  }

  override tensorBuffer(byteLength: number): ArrayBuffer {
    return this.buffers.take(byteLength);
  }

  override recycle(feeds: InputFeeds): void {
    for (const name in feeds) this.buffers.give(feeds[name].data.buffer as ArrayBuffer);
  }

  async unload(modelId: string): Promise<void> {
    const model = this.models.get(modelId);
    if (!model) return;
    this.models.delete(modelId);
    await this.close(model);
  }

  queueDepth(): QueueDepth {
    let fullest: QueueDepth | undefined;
    for (const { batcher } of this.models.values()) {
      const depth = batcher.queueDepth;
      const fill = depth.queuedRows / depth.maxQueueRows;
      const best = fullest ? fullest.queuedRows / fullest.maxQueueRows : -1;
      // Among equally full queues (all empty, say) the smallest bounds what may come next.
      if (fill > best || (fill === best && depth.maxQueueRows < fullest!.maxQueueRows))
        fullest = depth;
    }
    return fullest ?? { queuedRows: 0, maxQueueRows: Infinity };
  }

  /** For tests and diagnostics. */
  pool(modelId: string): InstancePool | undefined {
    return this.models.get(modelId)?.pool;
  }

  /** After the HTTP server has drained (see SceneRegistry.onApplicationShutdown). */
  async onApplicationShutdown(): Promise<void> {
    await this.threads.close();
    await Promise.all([...this.models.keys()].map((id) => this.unload(id)));
  }

  /** For tests and diagnostics: the started threads with no model. */
  get spareThreads(): ThreadReserve {
    return this.threads;
  }

  private async close(model: LoadedModel): Promise<void> {
    await model.batcher.close();
    await model.pool.close();
  }

  private events(labels: { model: string; version: string }) {
    const m = this.metrics;
    return {
      dispatched: (rows: number, queueMs: number[]) => {
        m?.batchRows.observe(labels, rows);
        for (const ms of queueMs) m?.queueMs.observe(labels, ms);
      },
      completed: (
        rows: number,
        computeMs: number,
        outputs: Record<string, { buffer: ArrayBuffer }>,
      ) => {
        m?.computeMs.observe(labels, computeMs);
        m?.rowsScored.inc(labels, rows);
        for (const [output, { buffer }] of Object.entries(outputs)) {
          const bad = countNonFinite(new Float32Array(buffer));
          if (bad > 0) {
            m?.nonFinite.inc({ ...labels, output }, bad);
            this.logger.warn(
              `model ${labels.model} ${labels.version}: ${bad} NaN/Inf values in output ${output}`,
            );
          }
        }
      },
      rejected: (reason: string, requests: number) =>
        m?.rejections.inc({ ...labels, reason }, requests),
    };
  }
}

/** Outputs of a request with no rows: each output with 0 rows and its declared width. */
function emptyOutputs(metadata: ModelMetadata): OutputTensors {
  const outputs: OutputTensors = {};
  for (const { name, shape } of metadata.outputs) {
    const tail = shape.slice(1).map((d) => (typeof d === 'number' && d >= 0 ? d : 1));
    outputs[name] = { data: new Float32Array(0), dims: [0, ...tail] };
  }
  return outputs;
}

/**
 * The nice value of the process's helper threads (see lowerHelperThreads): one below the model
 * threads' priority, so that they never take a core from a serving model thread, and the model
 * threads stay the ones at SCORING_WORKER_NICE exactly (the benchmarks tell them apart by it).
 * None with SCORING_WORKER_NICE 0: then nothing is lowered.
 */
export function helperNice(workerNice: number): number {
  return workerNice <= 0 ? 0 : Math.min(19, workerNice + 1);
}
