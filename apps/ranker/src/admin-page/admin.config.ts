import { SecretSetting } from '@app/common';
import { IsInt, Matches, Max, MaxLength, Min, MinLength, ValidateIf } from 'class-validator';

/**
 * The admin token guards everything admin-related (the /admin page; the admin API shares it).
 * Unset, nothing admin-related is served at all.
 */
export class AdminConfig {
  /** Bearer token of the admin API and the /admin page; at least 16 visible ASCII characters. */
  @SecretSetting()
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
