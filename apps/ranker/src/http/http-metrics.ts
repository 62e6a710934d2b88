import { Logger } from '@nestjs/common';
import { ThrottledWarnings } from '@app/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Counter, Histogram, Registry } from 'prom-client';

/**
 * The log lines of refused requests (4xx, 503, 504), at most this many a second with a count of
 * the rest: under overload or a misbehaving caller they would otherwise be one line a request,
 * written on the serving thread when it can least afford it. `ranker_http_requests_total` counts
 * every one by status and code. Unexpected errors (500) are always logged, with their stack.
 */
export const HTTP_WARNINGS_PER_SECOND = 10;
const logger = new Logger('HttpError');
/** Requests refused with a 4xx, 503 or 504. */
export const httpWarnings = new ThrottledWarnings(logger, HTTP_WARNINGS_PER_SECOND);
/** Uploads their client gave up on (a budget of their own: refusals do not crowd them out). */
export const abortWarnings = new ThrottledWarnings(logger, HTTP_WARNINGS_PER_SECOND);
/** What Node refused to parse as a request at all (no request, so no request metrics either). */
export const clientErrorWarnings = new ThrottledWarnings(logger, HTTP_WARNINGS_PER_SECOND);

/** The error code each refused request was answered with, for its metrics (2xx have none). */
const errorCodes = new WeakMap<FastifyRequest, string>();

/** Notes the error `code` `request` is answered with (the error filters call this). */
export function noteErrorCode(request: FastifyRequest, code: string): void {
  errorCodes.set(request, code);
}

/** A route never matched (a 404 for an unknown path): one label value, whatever the path was. */
const UNMATCHED = 'unmatched';
const LATENCY_BUCKETS_MS = [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000];

/** One label combination's counter and histogram, as prom-client's `labels()` gives them. */
interface Series {
  requests: { inc(): void };
  duration: { observe(ms: number): void };
}

/**
 * Requests and their latency by route (the route's pattern, e.g. `/v1/scenes/:scene/rank`, never
 * the path a caller sent), method, status and error code: what an operator reads first (rate,
 * errors, duration). Each label combination's series are looked up once and kept: a request costs
 * two increments, not prom-client's label hashing.
 */
export class HttpMetrics {
  private readonly requests: Counter<'method' | 'route' | 'status' | 'code'>;
  private readonly duration: Histogram<'method' | 'route' | 'status_class'>;
  private readonly series = new Map<string, Series>();

  constructor(registry: Registry) {
    this.requests = new Counter({
      name: 'ranker_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern, status and error code (ok for none)',
      labelNames: ['method', 'route', 'status', 'code'],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'ranker_http_request_ms',
      help: 'Time from a request read to its answer sent, by method, route pattern and status class',
      labelNames: ['method', 'route', 'status_class'],
      buckets: LATENCY_BUCKETS_MS,
      registers: [registry],
    });
  }

  record(request: FastifyRequest, reply: FastifyReply): void {
    const method = request.method;
    const route = request.routeOptions.url ?? UNMATCHED;
    const status = reply.statusCode;
    const code = errorCodes.get(request) ?? (status < 400 ? 'ok' : 'none');
    const key = `${method} ${route} ${status} ${code}`;
    let series = this.series.get(key);
    if (series === undefined) {
      series = {
        requests: this.requests.labels({ method, route, status: String(status), code }),
        duration: this.duration.labels({
          method,
          route,
          status_class: `${Math.floor(status / 100)}xx`,
        }),
      };
      this.series.set(key, series);
    }
    series.requests.inc();
    series.duration.observe(reply.elapsedTime);
  }
}

/**
 * Records every answered request once `metrics()` gives the app's metrics (they are made once the
 * app's registry exists; the hook has to be added to Fastify before that).
 */
export function recordHttpRequests(
  fastify: FastifyInstance,
  metrics: () => HttpMetrics | undefined,
): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    metrics()?.record(request, reply);
    done();
  });
}
