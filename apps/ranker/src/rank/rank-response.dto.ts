import { ApiProperty } from '@nestjs/swagger';
import { RankedItem, RankResult } from '@app/pipeline';

/** The 200 answer of a rank call, as `/docs` publishes it; the pipeline's RankResult is the type. */
export class RankedItemBody implements RankedItem {
  @ApiProperty({ example: 'i2' })
  id: string;

  @ApiProperty({ example: 0.131 })
  score: number;
}

export class RankResultBody implements RankResult {
  @ApiProperty({ example: 'feed' })
  scene: string;

  @ApiProperty({ example: 'v1', description: 'bundle version that ranked this request' })
  version: string;

  @ApiProperty({
    example: 'stable',
    description:
      'rollout arm that served: `stable`, `canary` or `<experiment>:<arm>` (traffic.yaml or its run-time override)',
  })
  arm: string;

  @ApiProperty({ description: 'features the store could not deliver in time took their defaults' })
  degraded: boolean;

  @ApiProperty({ type: [RankedItemBody], description: 'best first; ties keep request order' })
  items: RankedItem[];
}
