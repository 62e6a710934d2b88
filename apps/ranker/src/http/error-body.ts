import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ErrorDetail, MAX_ERROR_DETAILS, RankerErrorBody } from '@app/common';

export class ErrorDetailBody implements ErrorDetail {
  @ApiProperty({ example: 'candidates[2].id', description: 'path of the offending field' })
  path?: string;

  @ApiProperty({ example: "duplicate id 'a' (first at candidates[0])" })
  message: string;
}

/** The one error body every non-2xx answer of the HTTP app has, as `/docs` publishes it. */
export class ErrorBody implements RankerErrorBody {
  @ApiProperty({ example: 'REQUEST_INVALID' })
  code: string;

  @ApiProperty()
  message: string;

  @ApiProperty({ type: [ErrorDetailBody], maxItems: MAX_ERROR_DETAILS })
  details: ErrorDetail[];

  /** Present only when `details` was cut to MAX_ERROR_DETAILS entries: how many there were. */
  @ApiPropertyOptional({
    type: 'integer',
    description: `present only when details was cut to its first ${MAX_ERROR_DETAILS}: the full count`,
  })
  detailsTotal?: number;

  @ApiPropertyOptional({ description: 'the x-request-id of the call' })
  requestId?: string;

  /** A framework's own body where it has one, e.g. the terminus report of a failed health check. */
  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  info?: unknown;
}
