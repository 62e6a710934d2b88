import { LoopSlicer } from './loop-slicer';

function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** Counts loop turns (check phases) while `run` goes on. */
async function countingTurns<T>(run: (turn: () => number) => Promise<T>): Promise<T> {
  let turns = 0;
  let counting = true;
  const tick = () => {
    turns++;
    if (counting) setImmediate(tick);
  };
  setImmediate(tick);
  try {
    return await run(() => turns);
  } finally {
    counting = false;
  }
}

describe('LoopSlicer', () => {
  it('lets every ask of a turn go on at once while the slice lasts', () => {
    const slicer = new LoopSlicer(50);
    for (let i = 0; i < 10; i++) expect(slicer.pass()).toBeUndefined();
    expect(slicer.queued).toBe(0);
  });

  it('holds asks past the slice and lets them go one per loop turn, in the order they asked', async () => {
    const slicer = new LoopSlicer(2);
    const order: number[] = [];
    const turnsSeen: number[] = [];
    await countingTurns(async (turn) => {
      expect(slicer.pass()).toBeUndefined();
      busy(3);
      const waits = Array.from({ length: 5 }, (_, i) => {
        const wait = slicer.pass();
        expect(wait).toBeInstanceOf(Promise);
        return wait!.then(() => {
          order.push(i);
          turnsSeen.push(turn());
        });
      });
      expect(slicer.queued).toBe(5);
      await Promise.all(waits);
    });
    expect(order).toEqual([0, 1, 2, 3, 4]);
    for (let i = 1; i < turnsSeen.length; i++)
      expect(turnsSeen[i]).toBeGreaterThan(turnsSeen[i - 1]);
    expect(slicer.queued).toBe(0);
  });

  it('puts a new ask behind those already waiting, even in a fresh turn', async () => {
    const slicer = new LoopSlicer(1);
    const order: string[] = [];
    slicer.pass();
    busy(2);
    const first = slicer.pass()!.then(() => order.push('first'));
    const second = slicer.pass()!.then(() => order.push('second'));
    await nextTurn();
    // The first has gone on (its own turn); the second still waits: a newcomer goes behind it.
    const late = slicer.pass();
    expect(late).toBeInstanceOf(Promise);
    await Promise.all([first, second, late!.then(() => order.push('late'))]);
    expect(order).toEqual(['first', 'second', 'late']);
    // Nobody waiting, a new turn: a fresh slice.
    await nextTurn();
    expect(slicer.pass()).toBeUndefined();
  });

  it('lets timers fire between the steps of a burst', async () => {
    const slicer = new LoopSlicer(2);
    const events: string[] = [];
    setTimeout(() => events.push('timer'), 0);
    // 20 steps of 1 ms ready at once: without slicing they would run back to back, 20 ms in which
    // the timer (due after 1 ms) could not fire.
    const steps = Array.from({ length: 20 }, async (_, i) => {
      const wait = slicer.pass();
      if (wait) await wait;
      busy(1);
      events.push(`step ${i}`);
    });
    await Promise.all(steps);
    const timerAt = events.indexOf('timer');
    expect(timerAt).toBeGreaterThan(0);
    expect(timerAt).toBeLessThan(10);
    expect(events.filter((e) => e !== 'timer')).toEqual(
      Array.from({ length: 20 }, (_, i) => `step ${i}`),
    );
  });

  it('never holds anyone back with a slice of 0', () => {
    const slicer = new LoopSlicer(0);
    slicer.pass();
    busy(2);
    for (let i = 0; i < 5; i++) expect(slicer.pass()).toBeUndefined();
  });
});
