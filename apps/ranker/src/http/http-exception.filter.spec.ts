import { BadRequestException, NotFoundException } from '@nestjs/common';
import {
  DeadlineExceededError,
  ModelInputError,
  OverloadedError,
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

  it('hides the message of an unexpected error behind a 500', () => {
    const [status, body] = toErrorBody(new TypeError('secret internals'));
    expect(status).toBe(500);
    expect(body).toEqual({ code: 'INTERNAL', message: 'internal error', details: [] });
  });
});
