/**
 * An HTTP load generator for the rank API, run in its own process (never the ranker's).
 * Two modes, as in Triton's perf_analyzer:
 * - concurrency N: N callers, each sending its next request as soon as the last one answered
 *   (closed loop); latency runs from send to last byte;
 * - rate R: requests leave on a fixed schedule of R per second whatever the answers (open loop);
 *   latency runs from the scheduled time, so a server (or generator) that falls behind shows it
 *   instead of hiding it (no coordinated omission).
 * Successful bodies are drained unread; an error body is parsed for its `code`.
 */
import { KeepAliveClient, KeepBody } from './keep-alive-client';

export type LoadMode = 'concurrency' | 'rate';

export interface LoadStep {
  mode: LoadMode;
  level: number;
  seconds: number;
}

export interface StepResult extends LoadStep {
  /** Wall time from the first send until the last answer. */
  elapsedS: number;
  sent: number;
  ok: number;
  /** Latencies of successful requests, ms, in completion order. */
  latenciesMs: number[];
  /** Failures by `<status> <code>` (from the error body) or by network error code. */
  errors: Record<string, number>;
}

export interface LoadTarget {
  /** Full URL of the rank endpoint, e.g. http://127.0.0.1:8080/v1/scenes/feed/rank. */
  url: string;
  bodies: Buffer[];
  timeoutMs?: number;
  /** Rate mode: past this many unanswered requests, a due request is counted as CLIENT_BACKLOG. */
  maxInFlight?: number;
}

export interface Answer {
  status: number;
  /** The body when the status is not 2xx (or when asked for), else empty. */
  body: Buffer;
}

export class LoadGenerator {
  private readonly client: KeepAliveClient;
  private next = 0;

  constructor(private readonly target: LoadTarget) {
    if (target.bodies.length === 0) throw new Error('a load generator needs at least one body');
    this.client = new KeepAliveClient(target.url, target.timeoutMs);
  }

  /** One request; the answer's body kept as `keep` says (KeepBody; by default for errors only). */
  send(body: Buffer, keep: KeepBody = 'errors'): Promise<Answer> {
    return this.client.post(body, keep);
  }

  run(step: LoadStep): Promise<StepResult> {
    return step.mode === 'concurrency' ? this.closedLoop(step) : this.openLoop(step);
  }

  close(): void {
    this.client.close();
  }

  private nextBody(): Buffer {
    const body = this.target.bodies[this.next];
    this.next = (this.next + 1) % this.target.bodies.length;
    return body;
  }

  /** Sends one request and books its outcome; latency from `since`. */
  private async book(result: StepResult, since: number): Promise<void> {
    result.sent++;
    try {
      const answer = await this.send(this.nextBody());
      if (answer.status >= 200 && answer.status <= 299) {
        result.ok++;
        result.latenciesMs.push(performance.now() - since);
      } else count(result.errors, `${answer.status} ${errorCode(answer.body)}`.trim());
    } catch (error) {
      const e = error as NodeJS.ErrnoException;
      count(result.errors, e.code ?? e.message);
    }
  }

  private async closedLoop(step: LoadStep): Promise<StepResult> {
    const result = emptyResult(step);
    const start = performance.now();
    const end = start + step.seconds * 1000;
    const caller = async () => {
      while (performance.now() < end) await this.book(result, performance.now());
    };
    await Promise.all(Array.from({ length: step.level }, caller));
    result.elapsedS = (performance.now() - start) / 1000;
    return result;
  }

  private async openLoop(step: LoadStep): Promise<StepResult> {
    const result = emptyResult(step);
    const maxInFlight = this.target.maxInFlight ?? 1000;
    const interval = 1000 / step.level;
    const total = Math.max(1, Math.round(step.level * step.seconds));
    const pending = new Set<Promise<void>>();
    const start = performance.now();
    for (let i = 0; i < total; i++) {
      const due = start + i * interval;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((done) => setTimeout(done, wait));
      if (pending.size >= maxInFlight) {
        result.sent++;
        count(result.errors, 'CLIENT_BACKLOG');
        continue;
      }
      const sending = this.book(result, due).finally(() => pending.delete(sending));
      pending.add(sending);
    }
    await Promise.all(pending);
    // The schedule spans the whole step even when its last answers came early.
    result.elapsedS = Math.max(step.seconds, (performance.now() - start) / 1000);
    return result;
  }
}

function emptyResult(step: LoadStep): StepResult {
  return { ...step, elapsedS: 0, sent: 0, ok: 0, latenciesMs: [], errors: {} };
}

function count(errors: Record<string, number>, key: string): void {
  errors[key] = (errors[key] ?? 0) + 1;
}

/** The `code` of the service's error body `{ code, message, details }`, if it has one. */
export function errorCode(body: Buffer): string {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { code?: unknown };
    return typeof parsed.code === 'string' ? parsed.code : '';
  } catch {
    return '';
  }
}
