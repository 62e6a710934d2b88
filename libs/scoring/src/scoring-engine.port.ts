import type { QueueDepth } from '@app/common';
import { ModelLoadOptions } from './model-options';
import { InputFeeds, ModelMetadata, OutputTensors } from './tensor-types';

export interface ScoreOptions {
  /** performance.now() time after which rows not yet scored are dropped with DeadlineExceededError. */
  deadline?: number;
}

export interface LoadedModelInfo {
  metadata: ModelMetadata;
  /** Execution provider the instances run on. */
  provider: string;
  /** The most rows one request may have (the model's maxQueueRows); more are RequestTooLargeError. */
  maxRequestRows: number;
}

/**
 * Runs ONNX models. The pipeline builds input tensors and hands them over; how and where
 * inference runs (threads, batching, providers) is the engine's business.
 */
export abstract class ScoringEngine {
  abstract load(options: ModelLoadOptions): Promise<LoadedModelInfo>;

  /**
   * Scores one request's rows. Refusals come at once: OverloadedError when the model's queue is
   * too full now (transient: try again later), RequestTooLargeError when the request has more rows
   * than the queue ever holds (permanent: the same request never fits).
   */
  abstract score(
    modelId: string,
    feeds: InputFeeds,
    options?: ScoreOptions,
  ): Promise<OutputTensors>;

  /**
   * Throws what `score` would refuse `rows` rows of `modelId` with if they came now
   * (OverloadedError, RequestTooLargeError, or an error for a model not loaded), queueing nothing;
   * the refusal counts as `score`'s would. A caller about to score one request on several models
   * checks them all first, in the same turn of the event loop as its `score` calls: then either
   * every model takes the request or none does, and a refused request costs no tensor and no
   * inference.
   */
  abstract admit(modelId: string, rows: number): void;

  abstract unload(modelId: string): Promise<void>;

  /**
   * A buffer to build a model input of `byteLength` bytes in, of unspecified content (it may be
   * longer: view only its first `byteLength` bytes). Building into the engine's buffers and giving
   * them back with `recycle` spares an allocation per input per request.
   */
  tensorBuffer(byteLength: number): ArrayBuffer {
    return new ArrayBuffer(byteLength);
  }

  /**
   * Gives back the buffers of `feeds`, which the caller no longer reads or writes, once every
   * `score` call that was given them has settled (the engine copies or moves a request's rows
   * before it settles). Buffers moved to a worker are already back.
   */
  recycle(feeds: InputFeeds): void {
    void feeds;
  }

  /**
   * The fullest model queue (by queued rows over the rows it lets wait before refusing with
   * OverloadedError; of equally full ones the smallest); `{ queuedRows: 0, maxQueueRows:
   * Infinity }` with no model loaded. A caller
   * that feeds the engine from a backlog, as the Kafka worker does, holds back above a high-water
   * mark instead of being refused.
   */
  abstract queueDepth(): QueueDepth;
}
