import { IsInt, IsNotEmpty, Max, Min } from 'class-validator';

export class BatchScorerConfig {
  /** Consumer group of the batch scorer: replicas share the input topic's partitions. */
  @IsNotEmpty()
  BATCH_SCORER_GROUP_ID = 'ranker-batch-scorer';

  /** Rank requests in. */
  @IsNotEmpty()
  BATCH_INPUT_TOPIC = 'ranker.rank.requests';

  /** One ranked result (or error body) per request, keyed by requestId. */
  @IsNotEmpty()
  BATCH_OUTPUT_TOPIC = 'ranker.rank.results';

  /** Requests that can never be scored, with the reason. */
  @IsNotEmpty()
  BATCH_DLQ_TOPIC = 'ranker.rank.requests.dlq';

  /** Port of the worker's /metrics and /health endpoints. */
  @IsInt()
  @Min(0)
  @Max(65535)
  METRICS_PORT = 9464;

  /** Budget of the drain on SIGTERM: finish in-flight requests, produce, commit, leave the group. */
  @IsInt()
  @Min(0)
  BATCH_SHUTDOWN_GRACE_MS = 30_000;
}
