import { IsInt, IsNotEmpty, Max, Min } from 'class-validator';

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
   * On SIGTERM, how long the HTTP server keeps reading its kept-alive connections before it
   * closes the idle ones: a request already sent on one is answered, not reset.
   */
  @IsInt()
  @Min(0)
  @Max(30_000)
  HTTP_CLOSE_GRACE_MS = 1000;
}
