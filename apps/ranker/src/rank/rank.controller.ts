import { Body, Controller, HttpCode, Param, Post, Req } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { RankRequest, RankResult, RankService } from '@app/pipeline';
import type { FastifyRequest } from 'fastify';
import { ErrorBody } from '../http/error-body';
import { RankRequestPipe } from './rank-request.pipe';
import { RankResultBody } from './rank-response.dto';

@ApiTags('rank')
@Controller('v1/scenes')
export class RankController {
  constructor(private readonly ranker: RankService) {}

  @Post(':scene/rank')
  @HttpCode(200)
  // No response schema on purpose: Fastify then writes the answer with JSON.stringify, which on
  // real answers (100 distinct float scores) took half the time and garbage of a compiled
  // fast-json-stringify (27-30 against 62-72 µs with the UTF-8 encoding; its per-number
  // string concatenation only wins when V8's number-string cache hits). See
  // test/bench/RESULTS.md, bench:rank.
  @ApiParam({ name: 'scene', example: 'feed' })
  @ApiBody({ type: RankRequest })
  @ApiOkResponse({ type: RankResultBody })
  @ApiResponse({ status: 400, type: ErrorBody, description: 'MALFORMED_JSON, REQUEST_INVALID' })
  @ApiResponse({ status: 404, type: ErrorBody, description: 'SCENE_NOT_FOUND' })
  @ApiResponse({ status: 413, type: ErrorBody, description: 'BODY_TOO_LARGE, REQUEST_TOO_LARGE' })
  @ApiResponse({ status: 415, type: ErrorBody, description: 'UNSUPPORTED_MEDIA_TYPE' })
  @ApiResponse({
    status: 503,
    type: ErrorBody,
    description: 'SCENE_NOT_READY, OVERLOADED, WORKER_CRASHED',
  })
  @ApiResponse({ status: 504, type: ErrorBody, description: 'DEADLINE_EXCEEDED' })
  rank(
    @Param('scene') scene: string,
    @Body(RankRequestPipe) body: RankRequest,
    @Req() request: FastifyRequest,
  ): Promise<RankResult> {
    return this.ranker.rank(scene, { ...body, requestId: request.id });
  }
}
