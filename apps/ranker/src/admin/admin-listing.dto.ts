import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { SceneListing, VersionListing, VersionState } from '@app/pipeline';
import { ErrorDetailBody } from '../http/error-body';

const STATES: VersionState[] = [
  'incomplete',
  'available',
  'loading',
  'warming',
  'ready',
  'serving',
  'draining',
  'failed',
];

/** The OpenAPI shape of a version row of the admin list (the registry's VersionListing). */
export class VersionListingBody implements VersionListing {
  @ApiProperty({ example: 'v2' })
  version: string;

  @ApiProperty({ enum: STATES, example: 'serving' })
  state: VersionState;

  @ApiPropertyOptional({ description: 'which load of the version in this process' })
  generation?: number;

  @ApiProperty({
    type: [ErrorDetailBody],
    description: 'why it failed (every problem, with its YAML path) or is incomplete',
  })
  reasons: ErrorDetailBody[];

  @ApiProperty({ description: 'requests running on it now' })
  inFlight: number;

  @ApiPropertyOptional({ format: 'date-time' })
  loadedAt?: string;

  @ApiPropertyOptional({ format: 'date-time' })
  servingSince?: string;

  @ApiPropertyOptional({ format: 'date-time' })
  failedAt?: string;

  @ApiProperty({ example: '/app/models/feed/v2' })
  dir: string;
}

export class SceneListingBody implements SceneListing {
  @ApiProperty({ example: 'feed' })
  scene: string;

  @ApiProperty({ type: String, nullable: true, description: 'the version requests get by default' })
  stable: string | null;

  @ApiProperty({ type: [VersionListingBody], description: 'newest first' })
  versions: VersionListingBody[];

  @ApiProperty({
    type: Object,
    nullable: true,
    description:
      "the rollout: `traffic` (config in force, source override/file/default, revision, kept, problems, fileChangedSinceOverride), `override` (by, at, reason), `file`, `guard` (canary state, both arms' window stats, guardrail, rollback) and `shadows` (summaries per shadow and serving version); null before the first scan",
  })
  rollout: Record<string, unknown> | null;
}

export class ScenesBody {
  @ApiProperty({ type: [SceneListingBody] })
  scenes: SceneListingBody[];
}
