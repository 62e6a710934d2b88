import { Logger } from '@nestjs/common';
import { ThrottledWarnings } from './throttled-warnings';

describe('ThrottledWarnings', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('logs at most perSecond lines a second, then how many it held back', () => {
    const logger = new Logger('test');
    const warn = jest.spyOn(logger, 'warn').mockImplementation(() => undefined);
    const warnings = new ThrottledWarnings(logger, 3);
    for (let i = 0; i < 10; i++) warnings.warn(`w${i}`);
    expect(warn.mock.calls.map(([m]) => m)).toEqual(['w0', 'w1', 'w2']);
    jest.advanceTimersByTime(999);
    warnings.warn('still the same second');
    expect(warn).toHaveBeenCalledTimes(3);
    jest.advanceTimersByTime(1);
    warnings.warn('next second');
    expect(warn.mock.calls.slice(3).map(([m]) => m)).toEqual([
      '8 more warnings suppressed',
      'next second',
    ]);
  });
});
