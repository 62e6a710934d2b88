/**
 * A lean HTTP/1.1 client for the load generator: keep-alive connections over node:net, each
 * request written as one prebuilt buffer (request line, headers and body, built once per body)
 * and each answer read by a small parser (status line, `content-length` or chunked body,
 * `connection: close`). The load generator shares the machine's cores with the ranker it
 * measures, so every microsecond it spends per request is taken from the service: node:http's
 * client cost 70-95 µs of CPU per 100-candidate request on the 2-core machine (15% of a core at
 * concurrency 64), this one 31-37 µs. One request per connection at a time (no pipelining): a
 * caller waiting for its answer holds its connection.
 */
import { connect, Socket } from 'node:net';

export interface HttpAnswer {
  status: number;
  /** The body when kept (see KeepBody), else empty. */
  body: Buffer;
}

/**
 * Which answers' bodies are kept: every one, only those whose status is not 2xx, or of a 2xx body
 * only its first HEAD_OF_BODY_BYTES (copied, so the socket's chunk is not kept alive), enough
 * for a field near the start of the answer without the caller's heap holding every body.
 */
export type KeepBody = 'always' | 'errors' | 'head';

/** What `head` keeps of a 2xx body. */
export const HEAD_OF_BODY_BYTES = 128;

/** A failed exchange; `code` is the socket's (ECONNREFUSED, ECONNRESET, ...) or TIMEOUT. */
export type ExchangeError = Error & { code?: string };

/** A head longer than this is not an HTTP answer from the ranker. */
const MAX_HEAD_BYTES = 64 * 1024;
const HEAD_END = Buffer.from('\r\n\r\n');
const EMPTY = Buffer.alloc(0);

export class KeepAliveClient {
  private readonly idle: Connection[] = [];
  private readonly all = new Set<Connection>();
  private readonly requests = new WeakMap<Buffer, Buffer>();
  private readonly host: string;
  private readonly port: number;
  private readonly head: string;

  /**
   * `url`: an http:// URL; every request is a POST of JSON to its path. A request whose
   * connection is silent for `timeoutMs` fails with TIMEOUT (an idle connection that long is
   * closed).
   */
  constructor(
    url: string,
    private readonly timeoutMs = 30_000,
  ) {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:') throw new Error(`an http:// URL is needed, got ${url}`);
    this.host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
    this.port = Number(parsed.port || 80);
    this.head =
      `POST ${parsed.pathname}${parsed.search} HTTP/1.1\r\nhost: ${parsed.host}\r\n` +
      'content-type: application/json\r\nconnection: keep-alive\r\n';
  }

  post(body: Buffer, keep: KeepBody): Promise<HttpAnswer> {
    let bytes = this.requests.get(body);
    if (bytes === undefined) {
      const head = `${this.head}content-length: ${body.length}\r\n\r\n`;
      bytes = Buffer.concat([Buffer.from(head, 'latin1'), body]);
      this.requests.set(body, bytes);
    }
    const connection = this.idle.pop() ?? this.open();
    return connection.exchange(bytes, keep);
  }

  /** Ends every connection; a request still waiting fails with ECONNRESET. */
  close(): void {
    for (const connection of this.all) connection.destroy();
  }

  private open(): Connection {
    const socket = connect({ host: this.host, port: this.port });
    // Once per connection, not per request: arming a timer per request costs the load CPU.
    socket.setTimeout(this.timeoutMs);
    const connection = new Connection(socket, (c, reuse) => {
      if (reuse) this.idle.push(c);
      else {
        this.all.delete(c);
        const at = this.idle.indexOf(c);
        if (at >= 0) this.idle.splice(at, 1);
      }
    });
    this.all.add(connection);
    return connection;
  }
}

interface Waiting {
  resolve: (answer: HttpAnswer) => void;
  reject: (error: ExchangeError) => void;
  keep: KeepBody;
}

type State = 'head' | 'body' | 'chunk-size' | 'chunk-data' | 'chunk-end' | 'trailers' | 'to-close';

/** One keep-alive connection and the parser of its answers. */
class Connection {
  private waiting: Waiting | undefined;
  private pending: Buffer = EMPTY;
  private state: State = 'head';
  private status = 0;
  private remaining = 0;
  private closeAfter = false;
  private parts: Buffer[] = [];
  /** How many bytes of the body of the answer being read are kept, and were so far. */
  private keepBytes = 0;
  private kept = 0;
  private gone = false;

  constructor(
    private readonly socket: Socket,
    /** Told when an answer is complete (reuse: the connection may take another) or it is gone. */
    private readonly done: (connection: Connection, reuse: boolean) => void,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('timeout', () => this.fail(failure('request timed out', 'TIMEOUT')));
    socket.on('error', (error: ExchangeError) => this.fail(error));
    socket.on('close', () => {
      if (this.waiting !== undefined && this.state === 'to-close') this.finish();
      else this.fail(failure('socket hang up', 'ECONNRESET'));
    });
  }

  exchange(bytes: Buffer, keep: KeepBody): Promise<HttpAnswer> {
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject, keep };
      this.socket.write(bytes);
    });
  }

  destroy(): void {
    this.socket.destroy();
  }

  private read(chunk: Buffer): void {
    if (this.waiting === undefined) {
      this.fail(failure('data with no request waiting', 'EPROTO'));
      return;
    }
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    try {
      while (this.waiting !== undefined && this.step());
    } catch (error) {
      this.fail(error as ExchangeError);
    }
  }

  /** Takes what it can of `pending`; false when it needs more bytes. */
  private step(): boolean {
    const data = this.pending;
    switch (this.state) {
      case 'head': {
        const end = data.indexOf(HEAD_END);
        if (end < 0) {
          if (data.length > MAX_HEAD_BYTES) throw failure('answer head too long', 'EPROTO');
          return false;
        }
        this.pending = data.subarray(end + 4);
        this.parseHead(data.toString('latin1', 0, end));
        return true;
      }
      case 'body':
      case 'chunk-data':
      case 'to-close': {
        if (data.length === 0) return false;
        const take =
          this.state === 'to-close' ? data.length : Math.min(this.remaining, data.length);
        if (this.kept < this.keepBytes) {
          const n = Math.min(take, this.keepBytes - this.kept);
          const part = data.subarray(0, n);
          this.parts.push(this.keepBytes === Infinity ? part : Buffer.from(part));
          this.kept += n;
        }
        this.pending = data.subarray(take);
        this.remaining -= take;
        if (this.state === 'to-close' || this.remaining > 0) return false;
        if (this.state === 'body') this.finish();
        else this.state = 'chunk-end';
        return true;
      }
      case 'chunk-end':
      case 'chunk-size':
      case 'trailers': {
        const end = data.indexOf('\r\n');
        if (end < 0) return false;
        const line = data.toString('latin1', 0, end);
        this.pending = data.subarray(end + 2);
        if (this.state === 'chunk-end') {
          if (line !== '') throw failure('chunk not followed by CRLF', 'EPROTO');
          this.state = 'chunk-size';
        } else if (this.state === 'trailers') {
          if (line === '') this.finish();
        } else {
          const size = parseInt(line, 16);
          if (!Number.isFinite(size) || size < 0) throw failure(`bad chunk size ${line}`, 'EPROTO');
          this.remaining = size;
          this.state = size === 0 ? 'trailers' : 'chunk-data';
        }
        return true;
      }
    }
  }

  private parseHead(head: string): void {
    const lines = head.split('\r\n');
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]);
    if (status === null) throw failure(`not an HTTP answer: ${lines[0].slice(0, 80)}`, 'EPROTO');
    this.status = Number(status[1]);
    const keep = this.waiting!.keep;
    const ok = this.status >= 200 && this.status <= 299;
    this.keepBytes = keep === 'always' || !ok ? Infinity : keep === 'head' ? HEAD_OF_BODY_BYTES : 0;
    this.kept = 0;
    let length = -1;
    let chunked = false;
    this.closeAfter = lines[0].startsWith('HTTP/1.0');
    for (let i = 1; i < lines.length; i++) {
      const colon = lines[i].indexOf(':');
      if (colon < 0) continue;
      const name = lines[i].slice(0, colon).trim().toLowerCase();
      const value = lines[i]
        .slice(colon + 1)
        .trim()
        .toLowerCase();
      if (name === 'content-length') length = Number(value);
      else if (name === 'transfer-encoding') chunked = value.endsWith('chunked');
      else if (name === 'connection') this.closeAfter = value === 'close';
    }
    // A 1xx answer is followed by the real one.
    if (this.status < 200) this.state = 'head';
    else if (this.status === 204 || this.status === 304) this.finish();
    else if (chunked) this.state = 'chunk-size';
    else if (length >= 0) {
      this.remaining = length;
      this.state = 'body';
      if (length === 0) this.finish();
    } else {
      this.state = 'to-close';
      this.closeAfter = true;
    }
  }

  private finish(): void {
    const waiting = this.waiting!;
    const answer = {
      status: this.status,
      body: this.parts.length === 0 ? EMPTY : Buffer.concat(this.parts),
    };
    const reuse = !this.closeAfter && this.pending.length === 0 && !this.gone;
    this.waiting = undefined;
    this.state = 'head';
    this.parts = [];
    if (reuse) this.done(this, true);
    else this.end();
    waiting.resolve(answer);
  }

  private fail(error: ExchangeError): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    this.end();
    waiting?.reject(error);
  }

  private end(): void {
    if (this.gone) return;
    this.gone = true;
    this.socket.destroy();
    this.done(this, false);
  }
}

function failure(message: string, code: string): ExchangeError {
  return Object.assign(new Error(message), { code });
}
