import { IsInt, IsNotEmpty, Matches, Max, Min, ValidateIf } from 'class-validator';
import { BundleLimits } from './scene/bundle-files';

const MIB = 1024 * 1024;

export class PipelineConfig {
  /** Folder of bundles: `<BUNDLES_DIR>/<scene>/<version>/pipeline.yaml`. */
  @IsNotEmpty()
  BUNDLES_DIR = 'models';

  /**
   * How often BUNDLES_DIR is scanned for versions that appeared, changed or were removed; 0 never
   * scans after boot (reloads then come only from the admin API and the broadcast).
   */
  @IsInt()
  @ValidateIf((config: PipelineConfig) => config.BUNDLES_POLL_INTERVAL_MS !== 0)
  @Min(100, { message: 'must be 0 (off) or at least 100 ms' })
  @Max(3_600_000)
  BUNDLES_POLL_INTERVAL_MS = 5000;

  /** Largest pipeline.yaml; a larger one is refused from its size, never read. */
  @IsInt()
  @Min(1024)
  @Max(64 * MIB)
  BUNDLES_MAX_YAML_BYTES = MIB;

  /**
   * Largest golden.jsonl; a larger one is refused from its size, never read. Its lines are parsed
   * on the serving thread between golden requests, so a huge line would stall it briefly.
   */
  @IsInt()
  @Min(1024)
  @Max(1024 * MIB)
  BUNDLES_MAX_GOLDEN_BYTES = 16 * MIB;

  /**
   * Largest .onnx file of a bundle (every instance reads the whole file into its worker); raise it
   * for larger models (single-file ONNX stops at 2 GB).
   */
  @IsInt()
  @Min(1024)
  @Max(64 * 1024 * MIB)
  BUNDLES_MAX_MODEL_BYTES = 512 * MIB;

  /**
   * Redis that carries reload notices between replicas (pub/sub); empty: none, each replica
   * follows BUNDLES_DIR by polling alone. A Cluster node's URL works too (PUBLISH reaches every node).
   */
  @Matches(/^$|^rediss?:\/\/\S+$/, { message: 'must be empty or a redis:// or rediss:// URL' })
  BUNDLES_BROADCAST_REDIS_URL = '';

  /** Pub/sub channel of the reload notices; replicas that should follow each other share it. */
  @Matches(/^[\w:.-]{1,200}$/, { message: 'must be 1-200 letters, digits, _ : . -' })
  BUNDLES_BROADCAST_CHANNEL = 'ranker:bundles';

  /**
   * Prefix of the traffic override keys (`<prefix>traffic:{<scene>}:override|revision`) in the
   * Redis that keeps them: the features Redis when FEATURE_STORE=redis, else the broadcast Redis.
   */
  @Matches(/^[\w:.-]{0,100}$/, { message: 'must be 0-100 letters, digits, _ : . -' })
  TRAFFIC_REDIS_KEY_PREFIX = 'ranker:';

  /** Shadow runs in flight at once per replica; one more is shed (counted), never queued. */
  @IsInt()
  @Min(1)
  @Max(64)
  SHADOW_MAX_IN_FLIGHT = 2;

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

  /**
   * Event-loop slice of the rank path: past this many milliseconds of rank work in one loop turn,
   * further requests ready in that turn go on in later turns, one per turn, in order (see
   * LoopSlicer); 0 lets every ready request run in the turn that brought it. The Kafka worker's
   * requests are never sliced (see RankOptions).
   */
  @IsInt()
  @Min(0)
  @Max(1000)
  RANK_LOOP_SLICE_MS = 2;

  get bundleLimits(): BundleLimits {
    return {
      maxYamlBytes: this.BUNDLES_MAX_YAML_BYTES,
      maxGoldenBytes: this.BUNDLES_MAX_GOLDEN_BYTES,
      maxModelBytes: this.BUNDLES_MAX_MODEL_BYTES,
    };
  }
}
