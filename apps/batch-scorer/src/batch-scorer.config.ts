import {
  IsInt,
  IsNotEmpty,
  Matches,
  Max,
  Min,
  Validate,
  ValidationArguments,
  ValidatorConstraint,
  ValidatorConstraintInterface,
} from 'class-validator';

/** `a < b` between two settings, named in the message. */
@ValidatorConstraint({ name: 'lessThan' })
class LessThan implements ValidatorConstraintInterface {
  validate(value: number, args: ValidationArguments): boolean {
    const [other] = args.constraints as [string];
    return value < (args.object as Record<string, number>)[other];
  }

  defaultMessage(args: ValidationArguments): string {
    const [other] = args.constraints as [string];
    return `${args.property} must be less than ${other} (${(args.object as Record<string, number>)[other]})`;
  }
}

/** Kafka's own rule for topic names. */
const TOPIC = [
  /^[A-Za-z0-9._-]{1,249}$/,
  { message: 'must be a Kafka topic name ([A-Za-z0-9._-], 1-249)' },
] as const;

/** Settings of the Kafka worker, validated at boot; a bad one stops it naming the variable. */
export class BatchScorerConfig {
  /** Rank requests, one per message. */
  @Matches(...TOPIC)
  BATCH_INPUT_TOPIC = 'ranker.rank.requests';

  /** One result per request, keyed by requestId: the ranked list or the error body. */
  @Matches(...TOPIC)
  BATCH_OUTPUT_TOPIC = 'ranker.rank.results';

  /** Messages that are not rank requests (or whose rank failed), with x-dlq-reason. */
  @Matches(...TOPIC)
  BATCH_DLQ_TOPIC = 'ranker.rank.requests.dlq';

  /** Consumer group of the batch scorer: workers share the input topic's partitions. */
  @IsNotEmpty()
  BATCH_SCORER_GROUP_ID = 'ranker-batch-scorer';

  /** Partitions handled at once by one worker (kafkajs partitionsConsumedConcurrently). */
  @IsInt()
  @Min(1)
  @Max(1024)
  BATCH_CONCURRENT_PARTITIONS = 32;

  /** Requests being ranked at once by one worker, across its partitions. */
  @IsInt()
  @Min(1)
  @Max(100_000)
  BATCH_MAX_IN_FLIGHT = 256;

  /** Candidates being ranked at once by one worker; a larger request runs alone. */
  @IsInt()
  @Min(1)
  @Max(10_000_000)
  BATCH_MAX_IN_FLIGHT_ROWS = 16_384;

  /** Stop fetching once the fullest model queue is this full (of its maxQueueRows)... */
  @Min(0.01)
  @Max(1)
  BATCH_PAUSE_AT_QUEUE_FILL = 0.8;

  /** ...and fetch again once it has drained to this. */
  @Min(0)
  @Max(1)
  @Validate(LessThan, ['BATCH_PAUSE_AT_QUEUE_FILL'])
  BATCH_RESUME_AT_QUEUE_FILL = 0.5;

  /** Bytes one fetch may bring (all partitions): with the in-flight limits, the memory bound. */
  @IsInt()
  @Min(1024)
  @Max(1 << 30)
  BATCH_FETCH_MAX_BYTES = 10 << 20;

  /** Bytes one fetch may bring per partition. */
  @IsInt()
  @Min(1024)
  @Max(1 << 30)
  BATCH_FETCH_MAX_BYTES_PER_PARTITION = 1 << 20;

  /**
   * Results wait this long for more to share their produce request (fewer requests, less CPU).
   * 50 against 10 (bench:batch, 1,000-candidate backlog, four alternated pairs, 2026-12-06): 16
   * produce requests a second against 49-52, the worker's main thread 1.31-1.69 ms of CPU a
   * request against 1.69-1.98, the broker 0.35-0.56 against 0.56-0.64 (both lower in each pair).
   * A result so waits up to 50 ms more before it leaves when the worker is not busy.
   */
  @IsInt()
  @Min(0)
  @Max(1000)
  BATCH_PRODUCE_LINGER_MS = 50;

  /** Without a heartbeat for this long a worker leaves the group and its partitions move. */
  @IsInt()
  @Min(1000)
  @Max(3_600_000)
  BATCH_SESSION_TIMEOUT_MS = 30_000;

  /** On SIGTERM: time to finish in-flight requests, produce their results and commit. */
  @IsInt()
  @Min(0)
  @Max(3_600_000)
  BATCH_SHUTDOWN_GRACE_MS = 25_000;

  /** Port of the worker's own /metrics, /health/live and /health/ready (0: any free port). */
  @IsInt()
  @Min(0)
  @Max(65535)
  BATCH_METRICS_PORT = 9464;

  @IsNotEmpty()
  BATCH_METRICS_HOST = '0.0.0.0';
}
