import {
  ArgumentsHost,
  Catch,
  ExceptionFilter,
  HttpException,
  HttpStatus,
  Logger,
} from '@nestjs/common';
import { capErrorDetails, errorBodyOf, RankerError } from '@app/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isAbortedUpload } from './aborted-upload';
import { ErrorBody } from './error-body';
import { abortWarnings, httpWarnings, noteErrorCode } from './http-metrics';

interface FastifyLikeError {
  statusCode?: number;
  code?: string;
  message: string;
}

/**
 * Maps every error to `{ code, message, details, requestId }`: typed lib errors by their own
 * code and status, Nest HttpExceptions (validation, unknown route) and Fastify's body-parsing
 * errors as 4xx. A client that hangs up during its upload is logged as an aborted request.
 * Anything else is a 500 and is logged with its stack. Refusals (4xx, 503, 504) are logged at
 * most HTTP_WARNINGS_PER_SECOND a second; the request metrics count each by its code.
 */
@Catch()
export class HttpExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('HttpError');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const aborted = isAbortedUpload(exception, request.raw);
    const [status, body] = aborted
      ? abortedBody(exception as { code?: string; message: string })
      : toErrorBody(exception);
    body.requestId = request.id;
    noteErrorCode(request, body.code);
    const call = `${request.method} ${request.url} requestId=${request.id}`;
    if (aborted) {
      abortWarnings.warn(`aborted request ${call}: ${body.message}`);
    } else if (status === HttpStatus.INTERNAL_SERVER_ERROR) {
      this.logger.error(`${call}: ${(exception as Error)?.stack ?? exception}`);
    } else {
      httpWarnings.warn(`${call}: ${status} ${body.code} ${body.message}`);
    }
    if (status === HttpStatus.SERVICE_UNAVAILABLE) reply.header('retry-after', '1');
    if (status === HttpStatus.UNAUTHORIZED)
      reply.header('www-authenticate', 'Bearer realm="ranker-admin"');
    // Nobody reads the answer to an aborted upload; Fastify drops it with the socket.
    reply.status(status).send(body);
  }
}

export function toErrorBody(exception: unknown): [number, ErrorBody] {
  const [status, body] = mapError(exception);
  return [status, capErrorDetails(body)];
}

function mapError(exception: unknown): [number, ErrorBody] {
  if (exception instanceof RankerError) return errorBodyOf(exception);
  // Nest wraps Fastify's body-parsing errors in an HttpException whose cause is the Fastify error.
  const fastify = (exception instanceof HttpException ? exception.cause : exception) as
    FastifyLikeError | undefined;
  if (typeof fastify?.code === 'string' && fastify.code.startsWith('FST_')) {
    const status =
      exception instanceof HttpException ? exception.getStatus() : (fastify.statusCode ?? 400);
    if (status < 500) return [status, fastifyBody(fastify, status)];
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const response = exception.getResponse() as Partial<ErrorBody> | string;
    if (typeof response === 'object' && response.code) {
      return [
        status,
        {
          code: response.code,
          message: response.message ?? exception.message,
          details: Array.isArray(response.details) ? response.details : [],
        },
      ];
    }
    const info = typeof response === 'object' ? { info: response } : {};
    // Nest's own 404 is the router's: no route has this method and URL.
    const details =
      status === HttpStatus.NOT_FOUND ? [{ path: 'url', message: exception.message }] : [];
    return [status, { code: httpCode(status), message: exception.message, details, ...info }];
  }
  return errorBodyOf(exception);
}

function abortedBody(error: { code?: string; message: string }): [number, ErrorBody] {
  const code = error.code ?? error.message;
  const message = `the client closed the connection before its body arrived (${code})`;
  return [400, { code: 'REQUEST_ABORTED', message, details: [{ path: 'body', message }] }];
}

function fastifyBody(error: FastifyLikeError, status: number): ErrorBody {
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    const message = 'the body must be application/json (UTF-8)';
    return {
      code: 'UNSUPPORTED_MEDIA_TYPE',
      message,
      details: [{ path: 'headers.content-type', message }],
    };
  }
  // The router's refusals concern the URL; every other Fastify 4xx concerns the body.
  const path =
    error.code === 'FST_ERR_BAD_URL' || error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'url' : 'body';
  return {
    code: fastifyCode(error, status),
    message: error.message,
    details: [{ path, message: error.message }],
  };
}

function fastifyCode(error: FastifyLikeError, status: number): string {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'MALFORMED_JSON';
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'BODY_TOO_LARGE';
    case 'FST_ERR_BAD_URL':
      return 'MALFORMED_URL';
    default:
      return httpCode(status);
  }
}

function httpCode(status: number): string {
  return (HttpStatus[status] as string | undefined) ?? `HTTP_${status}`;
}
