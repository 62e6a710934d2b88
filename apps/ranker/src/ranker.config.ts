import { Secret } from '@app/common';
import { IsInt, IsNotEmpty, Matches, Max, Min, MinLength, ValidateIf } from 'class-validator';

export class RankerConfig {
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 8080;

  @IsNotEmpty()
  HOST = '0.0.0.0';

  /** Largest request body accepted; 3,000 candidates with features fit well inside 16 MiB. */
  @IsInt()
  @Min(1024)
  BODY_LIMIT_BYTES = 16 * 1024 * 1024;

  /**
   * Bearer token of the admin API (`/v1/admin/*`); empty: the admin API is not served at all.
   * At least 16 printable characters without spaces, e.g. `openssl rand -hex 32`.
   */
  @Secret()
  @ValidateIf((config: RankerConfig) => config.RANKER_ADMIN_TOKEN !== '')
  @MinLength(16)
  @Matches(/^[\x21-\x7e]+$/, { message: 'must be printable ASCII without spaces' })
  RANKER_ADMIN_TOKEN = '';

  get adminEnabled(): boolean {
    return this.RANKER_ADMIN_TOKEN !== '';
  }
}
