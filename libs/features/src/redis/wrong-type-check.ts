/** Keys checked per window at most, and the window's length. */
export interface WrongTypeCheckLimits {
  maxKeys: number;
  windowMs: number;
}

export const WRONG_TYPE_CHECK_LIMITS: WrongTypeCheckLimits = { maxKeys: 1000, windowMs: 1000 };

/** Redis types a feature key may have: a string, or none at all (the item is unknown). */
const READABLE_TYPES = new Set(['string', 'none']);

/**
 * Tells apart, off the request path, the two things MGET's nil means: a key that does not exist
 * (an unknown item, which takes its defaults as it should) and a key of another Redis type (a
 * hash, a list, ...: bad data, which MGET reports the same way). Asking TYPE for each nil key is
 * a round trip the request must not wait for, so the store offers its nil keys here after the
 * fetch and this check asks TYPE for them in the background, at most `maxKeys` a window (a flood
 * of unknown ids costs Redis a bounded number of TYPE commands), one check at a time: keys offered
 * while one runs, or past the window's share, are not checked. An item cached as absent is read
 * again once its negative entry expires (ITEM_CACHE_TTL_MS), so a key of another type is offered
 * again then: it is found, not necessarily on its first read.
 *
 * `typeOf` is the client's TYPE (auto-pipelined; routed by key in Cluster mode); `onWrongType`
 * hears each key of another type with its type. A failed check reports nothing: the request it
 * came from has already been answered, and a Redis outage is the fetch's to report.
 */
export class WrongTypeCheck {
  private running = false;
  private windowStart = -Infinity;
  private inWindow = 0;

  constructor(
    private readonly typeOf: (key: string) => Promise<string>,
    private readonly onWrongType: (key: string, type: string) => void,
    private readonly limits: WrongTypeCheckLimits = WRONG_TYPE_CHECK_LIMITS,
    private readonly clock: { now(): number } = performance,
  ) {}

  /** Whether a check is in flight (for specs). */
  get busy(): boolean {
    return this.running;
  }

  /** Checks up to the window's share of `keys` in the background; the keys are not kept. */
  offer(keys: readonly string[]): void {
    if (this.running || keys.length === 0) return;
    const now = this.clock.now();
    if (now - this.windowStart >= this.limits.windowMs) {
      this.windowStart = now;
      this.inWindow = 0;
    }
    const take = Math.min(keys.length, this.limits.maxKeys - this.inWindow);
    if (take <= 0) return;
    this.inWindow += take;
    this.running = true;
    void this.check(keys.slice(0, take)).finally(() => (this.running = false));
  }

  private async check(keys: string[]): Promise<void> {
    const types = await Promise.all(keys.map((key) => this.typeOf(key).catch(() => 'none')));
    types.forEach((type, k) => {
      if (!READABLE_TYPES.has(type)) this.onWrongType(keys[k], type);
    });
  }
}
