import { describeDetails, ErrorDetail, RankerError } from '@app/common';

/** A traffic config (traffic.yaml or an override) broke the rules; every problem has its path. */
export class TrafficInvalidError extends RankerError {
  readonly code = 'TRAFFIC_INVALID';
  readonly status = 422;
  constructor(
    readonly where: string,
    details: ErrorDetail[],
  ) {
    super(`traffic config ${where} is invalid: ${describeDetails(details)}`, details);
  }
}

/** A traffic change named the revision it was based on, and another change came first. */
export class TrafficConflictError extends RankerError {
  readonly code = 'TRAFFIC_CONFLICT';
  readonly status = 409;
  constructor(
    readonly scene: string,
    readonly expectedRevision: number,
    readonly currentRevision: number,
  ) {
    super(
      `traffic of scene '${scene}' is at revision ${currentRevision}, not ${expectedRevision}; read it again and retry`,
      [{ path: 'expectedRevision', message: `current revision is ${currentRevision}` }],
    );
  }
}

/** Redis could not be reached to read or write a traffic override; nothing was changed. */
export class TrafficStoreUnavailableError extends RankerError {
  readonly code = 'TRAFFIC_STORE_UNAVAILABLE';
  readonly status = 503;
}
