import { ApiHideProperty, ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { FeatureRow } from '@app/features';

/**
 * The rank request contract, shared by the HTTP edge, the Kafka edge and the golden check.
 * These classes are the types the pipeline receives and the schema `/docs` publishes; the
 * rules themselves are enforced by `validateRankRequest`, by hand, in one pass (see there why).
 */

export const MAX_ID_LENGTH = 256;
export const MAX_TIMEOUT_MS = 60_000;

/** OpenAPI schema of a flat feature map: name to string, finite number or boolean. */
const FEATURE_MAP = {
  type: 'object' as const,
  additionalProperties: { oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }] },
  description:
    'flat map of feature name to string, finite number or boolean; overrides stored features of the same name',
};

@ApiSchema({ description: 'unknown fields are refused' })
export class RankUser {
  @ApiProperty({ minLength: 1, maxLength: MAX_ID_LENGTH, example: 'u1' })
  id: string;

  @ApiPropertyOptional({ ...FEATURE_MAP, example: { age: 31 } })
  features?: FeatureRow;
}

@ApiSchema({ description: 'unknown fields are refused' })
export class RankCandidate {
  @ApiProperty({
    minLength: 1,
    maxLength: MAX_ID_LENGTH,
    example: 'i1',
    description: 'unique within the request',
  })
  id: string;

  @ApiPropertyOptional({ ...FEATURE_MAP, example: { price: 9.99 } })
  features?: FeatureRow;
}

/** A rank call as both edges (HTTP, Kafka) hand it to the pipeline after validation. */
@ApiSchema({ description: 'unknown fields are refused, so a typo (topk) is a 400' })
export class RankRequest {
  @ApiProperty({ type: RankUser })
  user: RankUser;

  @ApiPropertyOptional({ ...FEATURE_MAP, example: { hour: 20, device: 'ios' } })
  context?: FeatureRow;

  @ApiProperty({
    type: [RankCandidate],
    minItems: 1,
    description: 'at most RANK_MAX_CANDIDATES entries',
  })
  candidates: readonly RankCandidate[];

  /** How many items to return; defaults to the bundle's postprocess.topK. */
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    description: "defaults to the bundle's postprocess.topK; never more than the candidates",
  })
  topK?: number;

  /** Milliseconds the caller will wait; rows not scored by then are dropped. */
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_TIMEOUT_MS,
    description: 'rows not scored within this time are dropped and the call fails with 504',
  })
  timeoutMs?: number;

  /** Set by the edge (the `x-request-id` of the call); never read from the body. */
  @ApiHideProperty()
  requestId?: string;
}

export interface RankedItem {
  id: string;
  /** The fused score; null when it was NaN or infinite (then `nonFinite` is true). */
  score: number | null;
  /** Present only on items whose score was not finite: they rank after every finite score. */
  nonFinite?: true;
}

export interface RankResult {
  scene: string;
  version: string;
  /**
   * The rollout arm that served: `stable`, `canary` or `<experiment>:<arm>` (traffic.yaml or its
   * run-time override).
   */
  arm: string;
  /** True when features could not all be fetched in time and defaults stood in. */
  degraded: boolean;
  items: RankedItem[];
  /** How many candidates (returned or not) got a non-finite score; present only when > 0. */
  nonFiniteScores?: number;
}
