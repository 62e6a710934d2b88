import { IsInt, IsNotEmpty, Max, Min } from 'class-validator';

export class PipelineConfig {
  /** Folder of bundles: `<BUNDLES_DIR>/<scene>/<version>/pipeline.yaml`. */
  @IsNotEmpty()
  BUNDLES_DIR = 'models';

  /** Requests with more candidates are refused with 400. */
  @IsInt()
  @Min(1)
  @Max(100_000)
  RANK_MAX_CANDIDATES = 5000;

  /** Deadline of a rank call that sets no timeoutMs; 0 for none. */
  @IsInt()
  @Min(0)
  @Max(60_000)
  RANK_DEFAULT_TIMEOUT_MS = 0;
}
