import { AdmissionGate, AdmissionLimits } from './admission-gate';

const LIMITS: AdmissionLimits = { maxRequests: 3, maxRows: 100, pauseAt: 0.8, resumeAt: 0.5 };

function setUp(limits: Partial<AdmissionLimits> = {}) {
  let fill = 0;
  const events: string[] = [];
  const gate = new AdmissionGate(
    { ...LIMITS, ...limits },
    () => ({ queuedRows: fill * 100, maxQueueRows: 100 }),
    {
      paused: (f) => events.push(`paused at ${f}`),
      resumed: (f) => events.push(`resumed at ${f}`),
    },
    5,
  );
  const admitted: number[] = [];
  /** Asks for `rows`; the returned record says whether and in what order it was admitted. */
  const ask = (id: number, rows: number) => {
    const state = { admitted: undefined as boolean | undefined };
    void gate.acquire(rows).then((ok) => {
      state.admitted = ok;
      if (ok) admitted.push(id);
    });
    return state;
  };
  return { gate, events, admitted, ask, setFill: (f: number) => (fill = f) };
}

/** Lets every admission that is due happen (one per event-loop turn). */
const flush = async () => {
  for (let turn = 0; turn < 10; turn++) await new Promise((resolve) => setImmediate(resolve));
};

beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate'] }));
afterEach(() => jest.useRealTimers());

describe('AdmissionGate', () => {
  it('admits up to maxRequests messages, the next one when one finishes', async () => {
    const { gate, ask, admitted } = setUp();
    ask(1, 10);
    ask(2, 10);
    ask(3, 10);
    const fourth = ask(4, 10);
    await flush();
    expect(admitted).toEqual([1, 2, 3]);
    expect(fourth.admitted).toBeUndefined();
    expect(gate.inFlightRequests).toBe(3);
    gate.release(10);
    await flush();
    expect(admitted).toEqual([1, 2, 3, 4]);
    expect(gate.inFlightRows).toBe(30);
  });

  it('admits up to maxRows rows, and a message larger than maxRows alone', async () => {
    const { gate, ask, admitted } = setUp();
    ask(1, 60);
    ask(2, 50);
    await flush();
    expect(admitted).toEqual([1]);
    gate.release(60);
    await flush();
    expect(admitted).toEqual([1, 2]);
    ask(3, 500);
    await flush();
    expect(admitted).toEqual([1, 2]);
    gate.release(50);
    await flush();
    expect(admitted).toEqual([1, 2, 3]);
    expect(gate.inFlightRows).toBe(500);
  });

  it('admits waiters in arrival order: a small one never overtakes a large one', async () => {
    const { gate, ask, admitted } = setUp();
    ask(1, 90);
    ask(2, 50);
    ask(3, 5);
    await flush();
    expect(admitted).toEqual([1]);
    gate.release(90);
    await flush();
    expect(admitted).toEqual([1, 2, 3]);
  });

  it('holds everything back once the queue reaches pauseAt, and resumes at resumeAt', async () => {
    const { gate, ask, admitted, events, setFill } = setUp();
    ask(1, 10);
    await flush();
    setFill(0.85);
    const held = ask(2, 10);
    await flush();
    expect(held.admitted).toBeUndefined();
    expect(gate.paused).toBe(true);
    expect(events).toEqual(['paused at 0.85']);
    setFill(0.6);
    jest.advanceTimersByTime(20);
    await flush();
    expect(held.admitted).toBeUndefined();
    setFill(0.5);
    jest.advanceTimersByTime(5);
    await flush();
    expect(admitted).toEqual([1, 2]);
    expect(events).toEqual(['paused at 0.85', 'resumed at 0.5']);
    expect(gate.paused).toBe(false);
  });

  it('counts what it admitted this turn as queued, and holds back a message that would pass pauseAt', async () => {
    const { ask, admitted, events, setFill, gate } = setUp({ maxRequests: 10, maxRows: 1000 });
    setFill(0.3); // 30 of 100 rows queued: 50 more fit under pauseAt (80)
    for (const [id, rows] of [
      [1, 20],
      [2, 20],
      [3, 20],
      [4, 5],
    ])
      ask(id, rows);
    await Promise.resolve();
    expect(admitted).toEqual([1, 2]); // 30 + 40 + 20 would pass 80: nearly full
    expect(gate.paused).toBe(true);
    expect(events).toEqual(['paused at 0.7']);
    setFill(0.7); // what 1 and 2 brought, now in the queue
    jest.advanceTimersByTime(20);
    await flush();
    expect(admitted).toEqual([1, 2]);
    setFill(0.5);
    jest.advanceTimersByTime(5);
    await flush();
    expect(admitted).toEqual([1, 2, 3, 4]); // 50 + 20 + 5 fit
    expect(events).toEqual(['paused at 0.7', 'resumed at 0.5']);
  });

  it('starts a message larger than the mark once the queue is empty, pausing once meanwhile', async () => {
    const { ask, admitted, events, setFill } = setUp();
    setFill(0.1);
    ask(1, 95);
    jest.advanceTimersByTime(50); // below resumeAt, but the message does not fit: no flapping
    await flush();
    expect(admitted).toEqual([]);
    setFill(0);
    jest.advanceTimersByTime(5);
    await flush();
    expect(admitted).toEqual([1]);
    expect(events).toEqual(['paused at 0.1', 'resumed at 0']);
  });

  it('notices the drain with nobody waiting (a paused consumer fetches nothing)', async () => {
    const { gate, ask, events, setFill } = setUp();
    ask(1, 10);
    await flush();
    setFill(0.95);
    gate.release(10); // in flight drops to 0 with the queue full: paused, and nobody waits
    expect(gate.paused).toBe(true);
    setFill(0);
    jest.advanceTimersByTime(5);
    expect(gate.paused).toBe(false);
    expect(events).toEqual(['paused at 0.95', 'resumed at 0']);
  });

  it('answers every waiter false once closed, and admits nothing after', async () => {
    const { gate, ask } = setUp({ maxRequests: 1 });
    ask(1, 10);
    const waiting = ask(2, 10);
    gate.close();
    await flush();
    expect(waiting.admitted).toBe(false);
    expect(await gate.acquire(1)).toBe(false);
  });
});
