import { IsBoolean, IsInt, Max, Min } from 'class-validator';
import { availableParallelism } from 'node:os';

export class ScoringConfig {
  /**
   * Queue wait that sheds load (0: none): while the oldest rows waiting in a model's queue have
   * waited longer than this past their batch delay, new requests are refused with OverloadedError
   * (503 OVERLOADED), before any work. Bounds the wait of the requests that are answered under
   * overload, which maxQueueRows alone bounds only by rows (see DynamicBatcher).
   */
  @IsInt()
  @Min(0)
  @Max(600_000)
  SCORING_MAX_QUEUE_WAIT_MS = 0;

  /**
   * Model instances running at once across all models (default: one per core). More busy inference
   * threads than cores starve the event loop.
   */
  @IsInt()
  @Min(1)
  @Max(256)
  SCORING_MAX_CONCURRENT_BATCHES = availableParallelism();

  /** Worker instances of a model whose bundle does not say (default: one per core). */
  @IsInt()
  @Min(1)
  @Max(64)
  SCORING_DEFAULT_INSTANCES = availableParallelism();

  /**
   * Nice value of the model worker threads (0: same as the event loop). Inference threads run
   * below the event-loop thread, so when both want a core the request's own work (parsing,
   * features, tensors, answering) goes first: the event loop is not descheduled for a batch that
   * can wait a millisecond. Linux sets it per thread, so the main thread keeps its priority.
   */
  @IsInt()
  @Min(0)
  @Max(19)
  SCORING_WORKER_NICE = 10;

  /**
   * Model threads kept started with no model (0: none), so that a version loaded beside traffic
   * takes started threads instead of starting its own (see ThreadReserve): ~65-70 ms of CPU each
   * that a swap no longer takes from the serving threads, for ~9 MB each while idle. Started at
   * boot; a released version's threads come back to it. Default: two per core, the threads of
   * a two-model version at one instance per core.
   */
  @IsInt()
  @Min(0)
  @Max(1024)
  SCORING_SPARE_THREADS = 2 * availableParallelism();

  /**
   * Megabytes of batch input buffers kept for reuse (0: allocate every batch's afresh). Workers
   * hand their input buffers back with the results; see TensorBufferPool.
   */
  @IsInt()
  @Min(0)
  @Max(4096)
  SCORING_BUFFER_POOL_MB = 64;

  /**
   * onnxruntime's own telemetry (false: off, the default). On, onnxruntime-node records its
   * sessions and runtime figures under $XDG_CACHE_HOME/Microsoft (~/.cache/Microsoft when unset)
   * and uploads them to Microsoft when a CA bundle is readable; see applyOrtTelemetry.
   */
  @IsBoolean()
  SCORING_ORT_TELEMETRY = false;
}
