import { BadRequestException, NotFoundException } from '@nestjs/common';
import {
  DeadlineExceededError,
  ModelInputError,
  OverloadedError,
  RequestInvalidError,
  WorkerCrashedError,
} from '@app/common';
import { toErrorBody } from './http-exception.filter';

describe('toErrorBody', () => {
  it.each([
    [new OverloadedError('queue full'), 503, 'OVERLOADED'],
    [new WorkerCrashedError('worker died'), 503, 'WORKER_CRASHED'],
    [new DeadlineExceededError('too late'), 504, 'DEADLINE_EXCEEDED'],
    [new ModelInputError('bad tensor'), 500, 'MODEL_INPUT_INVALID'],
    [new NotFoundException('Cannot GET /x'), 404, 'NOT_FOUND'],
    [
      new BadRequestException({
        code: 'REQUEST_INVALID',
        message: 'm',
        details: [{ path: 'user.id', message: 'x' }],
      }),
      400,
      'REQUEST_INVALID',
    ],
  ])('maps %p to %i %s', (error, status, code) => {
    const [actualStatus, body] = toErrorBody(error);
    expect(actualStatus).toBe(status);
    expect(body.code).toBe(code);
    expect(typeof body.message).toBe('string');
    expect(Array.isArray(body.details)).toBe(true);
  });

  it('names the url of a route that does not exist', () => {
    const message = 'Cannot PUT /v1/admin/traffic';
    const [status, body] = toErrorBody(new NotFoundException(message));
    expect(status).toBe(404);
    expect(body).toMatchObject({ code: 'NOT_FOUND', message, details: [{ path: 'url', message }] });
  });

  it('hides the message of an unexpected error behind a 500', () => {
    const [status, body] = toErrorBody(new TypeError('secret internals'));
    expect(status).toBe(500);
    expect(body).toEqual({ code: 'INTERNAL', message: 'internal error', details: [] });
  });

  const many = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ path: `p${i}`, message: 'bad' }));

  it.each([
    ['a typed error', new RequestInvalidError('m', many(2345))],
    [
      'an HttpException with a code',
      new BadRequestException({ code: 'X', message: 'm', details: many(2345) }),
    ],
  ])('caps the details of %s at 100, keeping the count in detailsTotal', (_name, error) => {
    const [, body] = toErrorBody(error);
    expect(body.details).toEqual(many(100));
    expect(body.detailsTotal).toBe(2345);
  });

  it('has no detailsTotal when nothing was cut', () => {
    const [, body] = toErrorBody(new RequestInvalidError('m', many(100)));
    expect(body.details).toHaveLength(100);
    expect(body).not.toHaveProperty('detailsTotal');
  });

  it('names the content type of a 415 as the problem', () => {
    const fastify = Object.assign(new Error('Unsupported Media Type'), {
      code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE',
      statusCode: 415,
    });
    expect(toErrorBody(fastify)).toEqual([
      415,
      {
        code: 'UNSUPPORTED_MEDIA_TYPE',
        message: 'the body must be application/json (UTF-8)',
        details: [
          { path: 'headers.content-type', message: 'the body must be application/json (UTF-8)' },
        ],
      },
    ]);
  });
});
