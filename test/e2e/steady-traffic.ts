/** One answered rank call: when it left and came back, its status, and which version served it. */
export interface TrafficReply {
  startedAt: number;
  endedAt: number;
  status: number;
  version?: string;
  /** The error code, or the network error, of a failed call. */
  error?: string;
}

/**
 * `callers` closed loops ranking against `baseUrl` until stopped (each sends its next call as
 * soon as its last one answered), recording every reply, so a spec can check that nothing failed
 * across whatever it did meanwhile and which version answered when.
 */
export class SteadyTraffic {
  readonly replies: TrafficReply[] = [];
  private running = true;
  private readonly loops: Promise<void>[];

  constructor(
    private readonly url: string,
    callers: number,
    private readonly body: (caller: number, call: number) => unknown,
  ) {
    this.loops = Array.from({ length: callers }, (_, caller) => this.loop(caller));
  }

  /** Stops sending and resolves once every call in flight has answered. */
  async stop(): Promise<TrafficReply[]> {
    this.running = false;
    await Promise.all(this.loops);
    return this.replies;
  }

  get failures(): TrafficReply[] {
    return this.replies.filter((r) => r.status !== 200);
  }

  /** Resolves once a call that started after now was answered by `version`. */
  async until(version: string, withinMs = 30_000): Promise<TrafficReply> {
    const since = performance.now();
    for (const end = since + withinMs; performance.now() < end;) {
      const reply = this.replies.find((r) => r.startedAt >= since && r.version === version);
      if (reply) return reply;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`no reply from version ${version} within ${withinMs} ms`);
  }

  private async loop(caller: number): Promise<void> {
    for (let call = 0; this.running; call++) {
      const startedAt = performance.now();
      try {
        const response = await fetch(this.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(this.body(caller, call)),
        });
        const body = (await response.json()) as { version?: string; code?: string };
        this.replies.push({
          startedAt,
          endedAt: performance.now(),
          status: response.status,
          ...(response.status === 200 ? { version: body.version } : { error: body.code }),
        });
      } catch (error) {
        this.replies.push({
          startedAt,
          endedAt: performance.now(),
          status: 0,
          error: (error as Error).message,
        });
      }
    }
  }
}

/** A rank body for demo user `u<n>` with `candidates` demo items. */
export function demoRankBody(n: number, candidates: number): unknown {
  return {
    user: { id: `u${(n % 200) + 1}` },
    context: { hour: n % 24, device: 'ios' },
    candidates: Array.from({ length: candidates }, (_, i) => ({
      id: `i${((n * 37 + i * 13) % 5000) + 1}`,
    })),
  };
}
