import {
  DeadlineExceededError,
  OverloadedError,
  RequestInvalidError,
  RequestTooLargeError,
  SceneNotFoundError,
} from '@app/common';
import { countsAgainstVersion } from './guard-outcome';

describe('countsAgainstVersion', () => {
  it.each([
    ['a bug', new TypeError('x is undefined'), true],
    ['an overloaded engine (503)', new OverloadedError('full'), true],
    ['a deadline (504)', new DeadlineExceededError('late'), true],
    [
      'a request over the version’s model queue (413)',
      new RequestTooLargeError('big', 'm', 9, 8),
      true,
    ],
    ['an invalid request (400)', new RequestInvalidError('bad'), false],
    ['an unknown scene (404)', new SceneNotFoundError('nope'), false],
  ])('%s: %s', (_, error, counts) => {
    expect(countsAgainstVersion(error)).toBe(counts);
  });
});
