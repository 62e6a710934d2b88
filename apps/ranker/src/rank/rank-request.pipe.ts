import { Injectable, PipeTransform } from '@nestjs/common';
import { PipelineConfig, RankRequest, validateRankRequest } from '@app/pipeline';

/** Validates a rank body at the HTTP edge with the same function the Kafka edge uses. */
@Injectable()
export class RankRequestPipe implements PipeTransform<unknown, RankRequest> {
  constructor(private readonly config: PipelineConfig) {}

  transform(body: unknown): RankRequest {
    return validateRankRequest(body, this.config.RANK_MAX_CANDIDATES);
  }
}
