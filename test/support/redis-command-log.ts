import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';

export interface Recording {
  /** Waits until the server has reported every command the client sent before, then stops. */
  stop(): Promise<string[][]>;
}

/**
 * What one Redis server executed for one client connection, as MONITOR reports it (command name
 * lower-cased, then its arguments). Other clients of the same server (a shared dev Redis, other
 * tests) do not show up, unlike in INFO commandstats.
 */
export class RedisCommandLog {
  private constructor(
    private readonly base: Redis,
    private readonly monitor: Redis,
  ) {}

  static async open(port: number, host = '127.0.0.1'): Promise<RedisCommandLog> {
    const base = new Redis(port, host, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await base.connect();
    const monitor = await base.monitor();
    return new RedisCommandLog(base, monitor);
  }

  /**
   * Records the commands `client` makes on this server from now until `stop()`. Resolves once
   * the server has reported everything the client sent before, so nothing earlier leaks in.
   */
  async record(client: Redis): Promise<Recording> {
    const source = `${client.stream.localAddress}:${client.stream.localPort}`;
    const seen: string[][] = [];
    const listener = (_time: string, args: string[], from: string) => {
      if (from === source) seen.push([args[0].toLowerCase(), ...args.slice(1)]);
    };
    this.monitor.on('monitor', listener);
    const start = await this.mark(client, seen);
    return {
      stop: async () => {
        const end = await this.mark(client, seen);
        this.monitor.off('monitor', listener);
        return seen.slice(start + 1, end);
      },
    };
  }

  /** Sends a marker on the client's connection and waits until MONITOR reports it; its index. */
  private async mark(client: Redis, seen: string[][]): Promise<number> {
    const marker = `command-log-marker-${randomUUID()}`;
    const at = () => seen.findIndex((c) => c[0] === 'echo' && c[1] === marker);
    await client.echo(marker);
    const until = Date.now() + 5000;
    while (at() < 0) {
      if (Date.now() > until) throw new Error(`MONITOR never reported the marker ${marker}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return at();
  }

  close(): void {
    this.monitor.disconnect();
    this.base.disconnect();
  }
}
