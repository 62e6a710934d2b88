/**
 * Every error a lib throws on purpose carries a stable `code` and an HTTP-like `status`, so the
 * edges (HTTP exception filter, Kafka DLQ writer) map it without knowing each lib's internals.
 */
export interface ErrorDetail {
  /** Path of the offending field, e.g. `candidates[3].id` or `models[0].inputs.dense`. */
  path?: string;
  message: string;
}

/** Details as one line for a message or a log: `path: message; path: message`. */
export function describeDetails(details: readonly ErrorDetail[]): string {
  return details.map((d) => (d.path ? `${d.path}: ${d.message}` : d.message)).join('; ');
}

export abstract class RankerError extends Error {
  abstract readonly code: string;
  /** Status the HTTP edge answers with; the Kafka edge uses `status < 500` to mean "caller's fault". */
  abstract readonly status: number;

  constructor(
    message: string,
    readonly details: ErrorDetail[] = [],
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The body (or Kafka message value) is not JSON; the HTTP edge answers Fastify's own as the same code. */
export class MalformedJsonError extends RankerError {
  readonly code = 'MALFORMED_JSON';
  readonly status = 400;
}

export class RequestInvalidError extends RankerError {
  readonly code = 'REQUEST_INVALID';
  readonly status = 400;
}

/** No credentials, or credentials in a form the route does not take. */
export class UnauthorizedError extends RankerError {
  readonly code = 'UNAUTHORIZED';
  readonly status = 401;
}

/** Credentials that are not the right ones. */
export class ForbiddenError extends RankerError {
  readonly code = 'FORBIDDEN';
  readonly status = 403;
}

export class SceneNotFoundError extends RankerError {
  readonly code = 'SCENE_NOT_FOUND';
  readonly status = 404;
  constructor(readonly scene: string) {
    super(`unknown scene '${scene}'`, [
      { path: 'scene', message: `no bundle is loaded for scene '${scene}'` },
    ]);
  }
}

export class SceneNotReadyError extends RankerError {
  readonly code = 'SCENE_NOT_READY';
  readonly status = 503;
}

export class BundleInvalidError extends RankerError {
  readonly code = 'BUNDLE_INVALID';
  readonly status = 422;
  constructor(
    readonly bundleDir: string,
    details: ErrorDetail[],
  ) {
    super(`bundle ${bundleDir} is invalid: ${describeDetails(details)}`, details);
  }
}

export class ModelInputError extends RankerError {
  readonly code = 'MODEL_INPUT_INVALID';
  readonly status = 500;
}

export class ConfigInvalidError extends RankerError {
  readonly code = 'CONFIG_INVALID';
  readonly status = 500;
}

/** The scoring queue is full; callers should back off (HTTP 503 with Retry-After). */
export class OverloadedError extends RankerError {
  readonly code = 'OVERLOADED';
  readonly status = 503;
}

/**
 * A request with more rows than a model's queue may ever hold (its maxQueueRows): unlike
 * OverloadedError it can never be scored, however long the caller waits, so it must not be
 * retried. The engine throws it with the model and the sizes; the rank path adds the field.
 */
export class RequestTooLargeError extends RankerError {
  readonly code = 'REQUEST_TOO_LARGE';
  readonly status = 413;
  constructor(
    message: string,
    /** The engine id of the model that refused it. */
    readonly modelId: string,
    readonly rows: number,
    readonly maxRows: number,
    details: ErrorDetail[] = [],
  ) {
    super(message, details);
  }
}

/** The request's deadline passed before its rows were scored; they were dropped unscored. */
export class DeadlineExceededError extends RankerError {
  readonly code = 'DEADLINE_EXCEEDED';
  readonly status = 504;
}

/** A model worker thread died with rows in flight; those rows failed, the worker is replaced. */
export class WorkerCrashedError extends RankerError {
  readonly code = 'WORKER_CRASHED';
  readonly status = 503;
}

/** None of the execution providers a model asks for is available on this machine. */
export class ExecutionProviderUnavailableError extends RankerError {
  readonly code = 'EXECUTION_PROVIDER_UNAVAILABLE';
  readonly status = 500;
}

/** The model file could not be loaded (not ONNX, unreadable, unsupported operators). */
export class ModelLoadError extends RankerError {
  readonly code = 'MODEL_LOAD_FAILED';
  readonly status = 500;
}

/** A feature update could not be written (Redis or the dead-letter topic failed); it is retried. */
export class FeatureUpdateFailedError extends RankerError {
  readonly code = 'FEATURE_UPDATE_FAILED';
  readonly status = 503;
}
