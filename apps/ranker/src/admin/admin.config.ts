import { Secret } from '@app/common';
import { IsInt, Matches, Max, MaxLength, Min, MinLength, ValidateIf } from 'class-validator';

/**
 * The admin token guards everything admin-related: the admin API (`/v1/admin/*`) and the /admin
 * page. Unset, nothing admin-related is served at all (the app does not even import the modules).
 */
export class AdminConfig {
  /** Bearer token of the admin API and the /admin page; at least 16 visible ASCII characters. */
  @Secret()
  @ValidateIf((config: AdminConfig) => config.RANKER_ADMIN_TOKEN !== '')
  @MinLength(16)
  @MaxLength(512)
  @Matches(/^[\x21-\x7e]+$/, { message: 'RANKER_ADMIN_TOKEN must be visible ASCII, no spaces' })
  RANKER_ADMIN_TOKEN = '';

  /** How long a sign-in on the /admin page lasts. */
  @IsInt()
  @Min(60)
  @Max(7 * 24 * 3600)
  RANKER_ADMIN_SESSION_TTL_S = 8 * 3600;

  get enabled(): boolean {
    return this.RANKER_ADMIN_TOKEN !== '';
  }
}
