/** Backoff sleeps a stopping component ends early, all at once, with `wakeAll()`. */
export class WakeableSleeps {
  private readonly sleepers = new Set<() => void>();

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.sleepers.add(wake);
    });
  }

  wakeAll(): void {
    for (const wake of [...this.sleepers]) wake();
  }
}

/** 100 ms, doubling, at most 5 s: the backoff of a retry that waits for something to pass. */
export function exponentialBackoffMs(attempt: number): number {
  return Math.min(5000, 100 * 2 ** attempt);
}
