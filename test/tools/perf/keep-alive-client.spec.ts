import fc from 'fast-check';
import { createServer, Server, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { HEAD_OF_BODY_BYTES, KeepAliveClient } from './keep-alive-client';

interface Received {
  head: string;
  body: Buffer;
  /** Which connection it came on, counted from 1. */
  connection: number;
}

type Responder = (request: Received, socket: Socket) => unknown;

/** A raw TCP server that reads HTTP requests and answers with the bytes a spec scripts. */
class ScriptedServer {
  readonly received: Received[] = [];
  connections = 0;
  respond: Responder = (_, socket) => socket.write(answer(200, '{}'));
  private readonly server: Server;

  private constructor() {
    this.server = createServer((socket) => {
      const connection = ++this.connections;
      let pending = Buffer.alloc(0);
      socket.on('error', () => undefined);
      socket.on('data', (chunk) => {
        pending = Buffer.concat([pending, chunk]);
        for (;;) {
          const end = pending.indexOf('\r\n\r\n');
          if (end < 0) return;
          const head = pending.toString('latin1', 0, end);
          const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
          if (pending.length < end + 4 + length) return;
          const request = { head, body: pending.subarray(end + 4, end + 4 + length), connection };
          pending = pending.subarray(end + 4 + length);
          this.received.push(request);
          void this.respond(request, socket);
        }
      });
    });
  }

  static async start(): Promise<ScriptedServer> {
    const scripted = new ScriptedServer();
    await new Promise<void>((done) => scripted.server.listen(0, '127.0.0.1', done));
    return scripted;
  }

  get url(): string {
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('not listening');
    return `http://127.0.0.1:${address.port}/v1/scenes/feed/rank?x=1`;
  }

  close(): Promise<void> {
    return new Promise((done) => this.server.close(() => done()));
  }
}

function answer(status: number, body: string, headers: string[] = []): Buffer {
  const lines = [`HTTP/1.1 ${status} X`, `content-length: ${Buffer.byteLength(body)}`, ...headers];
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body}`);
}

/** A chunked answer; an empty part is left out (a chunk of size 0 ends the body). */
function chunked(status: number, parts: string[], trailers: string[] = []): Buffer {
  const chunks = parts
    .filter((p) => p !== '')
    .map((p) => `${Buffer.byteLength(p).toString(16)}\r\n${p}\r\n`)
    .join('');
  const tail = trailers.map((t) => `${t}\r\n`).join('');
  return Buffer.from(
    `HTTP/1.1 ${status} X\r\ntransfer-encoding: chunked\r\n\r\n${chunks}0\r\n${tail}\r\n`,
  );
}

/** Writes `bytes` in pieces cut at `cuts`, each after the last has left. */
async function writeInPieces(socket: Socket, bytes: Buffer, cuts: number[]): Promise<void> {
  const points = [...new Set(cuts.map((c) => c % bytes.length))].sort((a, b) => a - b);
  let from = 0;
  for (const to of [...points, bytes.length]) {
    if (to <= from) continue;
    await new Promise((done) => socket.write(bytes.subarray(from, to), done));
    await sleep(1);
    from = to;
  }
}

describe('KeepAliveClient (the load generator HTTP client)', () => {
  let server: ScriptedServer;
  let client: KeepAliveClient;

  beforeEach(async () => {
    server = await ScriptedServer.start();
    client = new KeepAliveClient(server.url, 2000);
  });
  afterEach(async () => {
    client.close();
    await server.close();
  });

  it('sends a JSON POST to the path and reuses one connection for requests in turn', async () => {
    const body = Buffer.from('{"user":{"id":"u1"}}');
    for (let i = 0; i < 5; i++) {
      const got = await client.post(body, 'always');
      expect(got).toEqual({ status: 200, body: Buffer.from('{}') });
    }
    expect(server.connections).toBe(1);
    const [first] = server.received;
    expect(first.head.split('\r\n')[0]).toBe('POST /v1/scenes/feed/rank?x=1 HTTP/1.1');
    expect(first.head).toMatch(/^content-type: application\/json$/m);
    expect(first.head).toMatch(new RegExp(`^content-length: ${body.length}$`, 'm'));
    expect(first.body).toEqual(body);
    expect(server.received).toHaveLength(5);
  });

  it('opens a connection per caller in flight, each getting its own answer', async () => {
    server.respond = async (request, socket) => {
      await sleep(20);
      socket.write(answer(200, request.body.toString()));
    };
    const bodies = Array.from({ length: 8 }, (_, i) => Buffer.from(`{"n":${i}}`));
    const answers = await Promise.all(bodies.map((b) => client.post(b, 'always')));
    expect(answers.map((a) => a.body.toString())).toEqual(bodies.map((b) => b.toString()));
    expect(server.connections).toBe(8);
  });

  it('keeps a 2xx body only when asked, an error body always', async () => {
    server.respond = (request, socket) =>
      socket.write(
        request.body.toString() === 'bad'
          ? answer(400, '{"code":"REQUEST_INVALID"}')
          : answer(200, '{"items":[]}'),
      );
    expect(await client.post(Buffer.from('ok'), 'errors')).toEqual({
      status: 200,
      body: Buffer.alloc(0),
    });
    const bad = await client.post(Buffer.from('bad'), 'errors');
    expect(bad.status).toBe(400);
    expect(bad.body.toString()).toBe('{"code":"REQUEST_INVALID"}');
    expect(server.connections).toBe(1);
  });

  it('keeps only the head of a 2xx body with `head`, and an error body whole', async () => {
    const long = `{"scene":"feed","version":"v7",${'"x":0,'.repeat(100)}"end":1}`;
    const error = `{"code":"OVERLOADED","detail":"${'y'.repeat(300)}"}`;
    server.respond = (request, socket) => {
      const text = request.body.toString();
      if (text === 'bad') socket.write(answer(503, error));
      // In HTTP chunks of 50 bytes: the head kept spans three of them.
      else if (text === 'chunked') socket.write(chunked(200, long.match(/.{1,50}/g)!));
      else socket.write(answer(200, text === 'short' ? '{}' : long));
    };
    const head = await client.post(Buffer.from('long'), 'head');
    expect(head.status).toBe(200);
    expect(head.body.toString()).toBe(long.slice(0, HEAD_OF_BODY_BYTES));
    expect((await client.post(Buffer.from('chunked'), 'head')).body.toString()).toBe(
      long.slice(0, HEAD_OF_BODY_BYTES),
    );
    expect((await client.post(Buffer.from('short'), 'head')).body.toString()).toBe('{}');
    const bad = await client.post(Buffer.from('bad'), 'head');
    expect(bad.status).toBe(503);
    expect(bad.body.toString()).toBe(error);
    expect((await client.post(Buffer.from('long'), 'always')).body.toString()).toBe(long);
    expect(server.connections).toBe(1);
  });

  it('reads chunked bodies (with trailers), skips 1xx answers and takes 204 as empty', async () => {
    const script = [
      chunked(200, ['{"a":', '1}']),
      chunked(503, ['{"code":"OVERLOADED"}'], ['x-trailer: 1']),
      Buffer.concat([Buffer.from('HTTP/1.1 100 Continue\r\n\r\n'), answer(200, 'after')]),
      Buffer.from('HTTP/1.1 204 No Content\r\n\r\n'),
    ];
    let n = 0;
    server.respond = (_, socket) => socket.write(script[n++]);
    expect((await client.post(Buffer.from('1'), 'always')).body.toString()).toBe('{"a":1}');
    const overloaded = await client.post(Buffer.from('2'), 'errors');
    expect([overloaded.status, overloaded.body.toString()]).toEqual([503, '{"code":"OVERLOADED"}']);
    expect((await client.post(Buffer.from('3'), 'always')).body.toString()).toBe('after');
    expect(await client.post(Buffer.from('4'), 'always')).toEqual({
      status: 204,
      body: Buffer.alloc(0),
    });
    expect(server.connections).toBe(1);
  });

  it('opens a new connection after `connection: close`, and reads a body to the close', async () => {
    server.respond = (request, socket) => {
      if (request.connection === 1) socket.write(answer(200, 'one', ['connection: close']));
      else socket.end(Buffer.from('HTTP/1.1 200 OK\r\n\r\nuntil the end'));
    };
    expect((await client.post(Buffer.from('1'), 'always')).body.toString()).toBe('one');
    expect((await client.post(Buffer.from('2'), 'always')).body.toString()).toBe('until the end');
    expect(await client.post(Buffer.from('3'), 'always')).toEqual({
      status: 200,
      body: Buffer.from('until the end'),
    });
    expect(server.connections).toBe(3);
  });

  it('parses any answer the same however its bytes are cut', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(200, 400, 503),
        fc.array(fc.string({ unit: 'grapheme', maxLength: 40 }), { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 6 }),
        async (status, parts, isChunked, cuts) => {
          const bytes = isChunked ? chunked(status, parts) : answer(status, parts.join(''));
          server.respond = (_, socket) => writeInPieces(socket, bytes, cuts);
          const got = await client.post(Buffer.from('{}'), 'always');
          expect(got.status).toBe(status);
          expect(got.body.toString()).toBe(parts.join(''));
        },
      ),
      { numRuns: 40 },
    );
    expect(server.connections).toBe(1);
  });

  it('fails with the socket error code: refused, reset mid-answer, silent, not HTTP', async () => {
    const port = Number(new URL(server.url).port);
    await server.close();
    const refused = new KeepAliveClient(`http://127.0.0.1:${port}/`, 500);
    await expect(refused.post(Buffer.from('{}'), 'errors')).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });
    server = await ScriptedServer.start();
    const scripts: Responder[] = [
      (_, socket) => socket.end(Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc')),
      () => undefined,
      (_, socket) => socket.write('SSH-2.0-OpenSSH\r\n\r\n'),
    ];
    const codes = [];
    for (const script of scripts) {
      server.respond = script;
      const once = new KeepAliveClient(server.url, 300);
      codes.push(
        await once.post(Buffer.from('{}'), 'errors').catch((e: { code: string }) => e.code),
      );
      once.close();
    }
    expect(codes).toEqual(['ECONNRESET', 'TIMEOUT', 'EPROTO']);
  });

  it('refuses a URL that is not http://', () => {
    expect(() => new KeepAliveClient('https://127.0.0.1:8443/')).toThrow(/http:\/\//);
  });
});
