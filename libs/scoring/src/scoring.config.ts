import { IsInt, Max, Min } from 'class-validator';
import { availableParallelism } from 'node:os';

export class ScoringConfig {
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
}
