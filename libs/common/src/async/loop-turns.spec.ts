import { LoopTurns } from './loop-turns';

describe('LoopTurns', () => {
  /** Counts event-loop iterations: one setImmediate per iteration, each scheduling the next. */
  function iterations(): { count: number; stop(): void } {
    const state = { count: 0, stopped: false, stop: () => (state.stopped = true) };
    const tick = () => {
      state.count++;
      if (!state.stopped) setImmediate(tick);
    };
    setImmediate(tick);
    return state;
  }

  it('resolves waiters in call order, each in a loop iteration of its own', async () => {
    const turns = new LoopTurns();
    const loop = iterations();
    const seen: { who: number; at: number }[] = [];
    await Promise.all(
      Array.from({ length: 5 }, (_, who) =>
        turns.next().then(() => seen.push({ who, at: loop.count })),
      ),
    );
    loop.stop();
    expect(seen.map((s) => s.who)).toEqual([0, 1, 2, 3, 4]);
    for (let i = 1; i < seen.length; i++) expect(seen[i].at).toBeGreaterThan(seen[i - 1].at);
  });

  it('serves waiters that come while it is handing out turns, and starts again when idle', async () => {
    const turns = new LoopTurns();
    const order: string[] = [];
    await turns.next().then(async () => {
      order.push('a');
      await turns.next();
      order.push('b');
    });
    await Promise.all([
      turns.next().then(() => order.push('c')),
      turns.next().then(() => order.push('d')),
    ]);
    expect(order).toEqual(['a', 'b', 'c', 'd']);
  });
});
