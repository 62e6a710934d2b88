import { Logger } from '@nestjs/common';

/**
 * Warnings that name the bad key, at most `perSecond` lines a second: a corrupt keyspace must not
 * flood the log (the metrics count every occurrence).
 */
export class ThrottledWarnings {
  private windowStart = 0;
  private inWindow = 0;
  private suppressed = 0;

  constructor(
    private readonly logger: Logger,
    private readonly perSecond = 10,
  ) {}

  warn(message: string): void {
    const now = Date.now();
    if (now - this.windowStart >= 1000) {
      if (this.suppressed > 0) this.logger.warn(`${this.suppressed} more warnings suppressed`);
      this.windowStart = now;
      this.inWindow = 0;
      this.suppressed = 0;
    }
    if (this.inWindow++ < this.perSecond) this.logger.warn(message);
    else this.suppressed++;
  }
}
