import { Body, Controller, HttpCode, Param, Post, Req } from '@nestjs/common';
import { RankRequestDto, RankResult, RankService } from '@app/pipeline';
import type { FastifyRequest } from 'fastify';

@Controller('v1/scenes')
export class RankController {
  constructor(private readonly ranker: RankService) {}

  @Post(':scene/rank')
  @HttpCode(200)
  rank(
    @Param('scene') scene: string,
    @Body() body: RankRequestDto,
    @Req() request: FastifyRequest,
  ): Promise<RankResult> {
    return this.ranker.rank(scene, { ...body, requestId: request.id });
  }
}
