import { OutcomeWindow } from './outcome-window';

/** A clock the spec moves by hand. */
function manualClock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe('OutcomeWindow', () => {
  it('counts requests and errors, and gives a p99 within 5% above the true one', () => {
    const clock = manualClock();
    const window = new OutcomeWindow(60_000, clock.now);
    for (let ms = 1; ms <= 100; ms++) window.record(ms % 10 !== 0, ms);
    const stats = window.stats();
    expect(stats).toMatchObject({ requests: 100, errors: 10, errorRate: 0.1 });
    // The 99th of 1..100 ms is 99 ms.
    expect(stats.p99Ms).toBeGreaterThanOrEqual(99);
    expect(stats.p99Ms).toBeLessThanOrEqual(99 * 1.05);
  });

  it('has no p99 and a zero error rate while empty', () => {
    expect(new OutcomeWindow(60_000, manualClock().now).stats()).toEqual({
      requests: 0,
      errors: 0,
      errorRate: 0,
    });
  });

  it('keeps outcomes for the window and drops them, slot by slot, once they are older', () => {
    const clock = manualClock(0);
    const window = new OutcomeWindow(30_000, clock.now); // 30 slots of 1 s
    window.record(false, 5);
    clock.advance(15_000);
    window.record(true, 5);
    clock.advance(14_999); // 29.999 s: the first slot is still in
    expect(window.counts()).toEqual({ requests: 2, errors: 1 });
    clock.advance(1); // 30 s: it slid out
    expect(window.counts()).toEqual({ requests: 1, errors: 0 });
    clock.advance(3_600_000); // long idle: everything slid out at once
    expect(window.stats()).toEqual({ requests: 0, errors: 0, errorRate: 0 });
    window.record(true, 7);
    expect(window.counts()).toEqual({ requests: 1, errors: 0 });
  });

  it('takes latencies at the extremes and a clock that went back', () => {
    const clock = manualClock();
    const window = new OutcomeWindow(60_000, clock.now);
    for (const ms of [0, -3, NaN, 1e9]) window.record(true, ms);
    clock.advance(-50_000);
    window.record(true, 1);
    expect(window.counts().requests).toBe(5);
    expect(window.p99Ms()).toBeGreaterThanOrEqual(600_000);
  });
});
