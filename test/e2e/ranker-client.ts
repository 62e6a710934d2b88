import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SceneRegistry } from '@app/pipeline';
import { createRankerApp } from '../../apps/ranker/src/ranker-app';

export interface Reply {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** Starts the real HTTP app on a loopback port and talks to it over HTTP, as a caller would. */
export class RankerClient {
  private constructor(
    readonly app: NestFastifyApplication,
    readonly baseUrl: string,
  ) {}

  /**
   * `env` is set while the app is built. The HTTP server closes at once when the spec closes it
   * (`HTTP_CLOSE_GRACE_MS` 0, unless `env` says otherwise): the grace is for callers still sending
   * on kept-alive connections, which a spec has not at its end (the grace itself is tested in
   * draining-fastify-adapter.spec.ts and shutdown.e2e-spec.ts).
   */
  static async start(env: Record<string, string> = {}): Promise<RankerClient> {
    env = { HTTP_CLOSE_GRACE_MS: '0', ...env };
    const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
    Object.assign(process.env, env);
    try {
      const app = await createRankerApp(['error']);
      await app.listen(0, '127.0.0.1');
      await app.get(SceneRegistry).whenLoaded();
      const address = app.getHttpServer().address() as { port: number };
      return new RankerClient(app, `http://127.0.0.1:${address.port}`);
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  }

  async request(
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
    headers: Record<string, string> = {},
  ): Promise<Reply> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: body === undefined ? headers : { ...headers, 'content-type': contentType },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: text ? JSON.parse(text) : undefined,
    };
  }

  rank(scene: string, body: unknown): Promise<Reply> {
    return this.request('POST', `/v1/scenes/${scene}/rank`, body);
  }

  /** The value of one metric series of /metrics (`name{labels}` as printed), 0 when absent. */
  async metric(series: string): Promise<number> {
    const text = await (await fetch(`${this.baseUrl}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? 0 : Number(line.slice(series.length + 1));
  }

  /** An admin API call bearing `token`. */
  admin(method: string, path: string, token: string): Promise<Reply> {
    return this.request(method, `/v1/admin${path}`, undefined, undefined, {
      authorization: `Bearer ${token}`,
    });
  }

  close(): Promise<void> {
    return this.app.close();
  }
}
