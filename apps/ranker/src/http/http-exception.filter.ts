import {
  ArgumentsHost,
  Catch,
  ExceptionFilter,
  HttpException,
  HttpStatus,
  Logger,
} from '@nestjs/common';
import { RankerError } from '@app/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ErrorBody } from './error-body';

interface FastifyLikeError {
  statusCode?: number;
  code?: string;
  message: string;
}

/**
 * Maps every error to `{ code, message, details, requestId }`: typed lib errors by their own
 * code and status, Nest HttpExceptions (validation, unknown route) and Fastify's body-parsing
 * errors as 4xx. Anything else is a 500 and is logged with its stack.
 */
@Catch()
export class HttpExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('HttpError');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const [status, body] = toErrorBody(exception);
    body.requestId = request.id;
    if (status === HttpStatus.INTERNAL_SERVER_ERROR) {
      this.logger.error(
        `${request.method} ${request.url} requestId=${request.id}: ${(exception as Error)?.stack ?? exception}`,
      );
    } else {
      this.logger.warn(
        `${request.method} ${request.url} requestId=${request.id}: ${status} ${body.code} ${body.message}`,
      );
    }
    if (status === HttpStatus.SERVICE_UNAVAILABLE) reply.header('retry-after', '1');
    reply.status(status).send(body);
  }
}

export function toErrorBody(exception: unknown): [number, ErrorBody] {
  if (exception instanceof RankerError) {
    return [
      exception.status,
      { code: exception.code, message: exception.message, details: exception.details },
    ];
  }
  // Nest wraps Fastify's body-parsing errors in an HttpException whose cause is the Fastify error.
  const fastify = (exception instanceof HttpException ? exception.cause : exception) as
    FastifyLikeError | undefined;
  if (typeof fastify?.code === 'string' && fastify.code.startsWith('FST_')) {
    const status =
      exception instanceof HttpException ? exception.getStatus() : (fastify.statusCode ?? 400);
    if (status < 500)
      return [
        status,
        {
          code: fastifyCode(fastify, status),
          message: fastify.message,
          details: [{ path: 'body', message: fastify.message }],
        },
      ];
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
          details: response.details ?? [],
        },
      ];
    }
    const info = typeof response === 'object' ? { info: response } : {};
    return [status, { code: httpCode(status), message: exception.message, details: [], ...info }];
  }
  return [500, { code: 'INTERNAL', message: 'internal error', details: [] }];
}

function fastifyCode(error: FastifyLikeError, status: number): string {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'MALFORMED_JSON';
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'BODY_TOO_LARGE';
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'UNSUPPORTED_MEDIA_TYPE';
    default:
      return httpCode(status);
  }
}

function httpCode(status: number): string {
  return (HttpStatus[status] as string | undefined) ?? `HTTP_${status}`;
}
