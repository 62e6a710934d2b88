import { IsNotEmpty } from 'class-validator';

export class BatchScorerConfig {
  /** Consumer group of the batch scorer: replicas share the input topic's partitions. */
  @IsNotEmpty()
  BATCH_SCORER_GROUP_ID = 'ranker-batch-scorer';
}
