/**
 * What the batch-scorer fuzz spec sends and expects: a generated message with the result its
 * requestId must get and the dead letter it must become, per the README's rules, and the helpers
 * the generators share (requestIds, own keys, expected refusals).
 */
import fc from 'fast-check';

export type HeaderValue = string | Buffer | null;
export type FuzzHeaders = Record<string, HeaderValue | HeaderValue[]>;

/** The result a message's requestId must get: `ok` for a ranked 200. */
export interface Answer {
  requestId: string;
  status: number;
  code: string;
  path?: string;
}

export interface FuzzCase {
  kind: string;
  key: string | Buffer | null;
  value: string | Buffer | null;
  headers: FuzzHeaders;
  answer?: Answer;
  /** The dead letter's x-dlq-reason, if the message must be dead-lettered. */
  dlq?: RegExp;
}

export interface FuzzLimits {
  /** The smallest model queue of scene feed (its `batching.maxQueueRows`), and which model. */
  queueRows: number;
  queueModel: string;
  /** RANK_MAX_CANDIDATES of the worker. */
  maxCandidates: number;
}

/** Gives out requestIds: fresh ones in a few hostile styles, or one an earlier message had. */
export class RequestIds {
  private n = 0;
  private readonly given: string[] = [];

  fresh(style: IdStyle = 'plain'): string {
    const n = this.n++;
    const id = {
      plain: `fz-${n}`,
      proto: '__proto__',
      ctor: 'constructor',
      unicode: `é 😀 键 ${n}`,
      longest: `${n}-`.padEnd(256, 'r'),
    }[style];
    this.given.push(id);
    return id;
  }

  /** An id already sent (a producer sending a request twice), or a fresh one if none was. */
  again(pick: number): string {
    return this.given.length === 0 ? this.fresh() : this.given[pick % this.given.length];
  }
}

export type IdStyle = 'plain' | 'proto' | 'ctor' | 'unicode' | 'longest';
export type Draft = (ids: RequestIds) => Omit<FuzzCase, 'key'>;
export type Json = Record<string, unknown>;

export const NO_HEADERS: FuzzHeaders = {};

export const RANK_HEADERS = { requestId: 'x-request-id', scene: 'x-scene' } as const;

/** An object with exactly these own keys, `__proto__` included (an own key, not the prototype). */
export function own(entries: [string, unknown][]): Json {
  const o: Json = {};
  for (const [k, v] of entries)
    Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  return o;
}

export const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
export const exactly = (text: string) => new RegExp(`^${escape(text)}$`);

export const idStyle = fc.constantFrom<IdStyle>(
  'plain',
  'plain',
  'plain',
  'proto',
  'ctor',
  'unicode',
  'longest',
);
export const invalid = (requestId: string | undefined, path: string, dlq: RegExp) => ({
  answer:
    requestId === undefined ? undefined : { requestId, status: 400, code: 'REQUEST_INVALID', path },
  dlq,
});
export const atPath = (path: string) => new RegExp(`^invalid request: (.+; )?${escape(path)}: `);
