import { Body, Controller, HttpCode, Param, Post, Req } from '@nestjs/common';
import { RankRequest, RankResult, RankService } from '@app/pipeline';
import type { FastifyRequest } from 'fastify';
import { RankRequestPipe } from './rank-request.pipe';

@Controller('v1/scenes')
export class RankController {
  constructor(private readonly ranker: RankService) {}

  @Post(':scene/rank')
  @HttpCode(200)
  rank(
    @Param('scene') scene: string,
    @Body(RankRequestPipe) body: RankRequest,
    @Req() request: FastifyRequest,
  ): Promise<RankResult> {
    return this.ranker.rank(scene, { ...body, requestId: request.id });
  }
}
