import { CoreBudget } from './core-budget';

describe('CoreBudget', () => {
  it('take() holds a free slot at once', async () => {
    const budget = new CoreBudget(2);
    await budget.take();
    expect(budget.inUse).toBe(1);
    expect(budget.hasFree).toBe(true);
    budget.release();
    expect(budget.inUse).toBe(0);
  });

  it('a waiting take() gets the next slot given back, ahead of the pools it would wake', async () => {
    const budget = new CoreBudget(1);
    budget.acquire(); // a pool's busy instance
    const woken: number[] = [];
    budget.subscribe(() => woken.push(budget.inUse));
    let held = false;
    const taking = budget.take().then(() => (held = true));
    await Promise.resolve();
    expect(held).toBe(false);
    budget.release();
    await taking;
    // The slot passed straight on: still in use, no pool was told a slot is free.
    expect(held).toBe(true);
    expect(budget.inUse).toBe(1);
    expect(budget.hasFree).toBe(false);
    expect(woken).toEqual([]);
    budget.release();
    expect(budget.inUse).toBe(0);
    expect(woken).toEqual([0]);
  });

  it('serves waiting take() calls first come first served', async () => {
    const budget = new CoreBudget(1);
    await budget.take();
    const order: string[] = [];
    const a = budget.take().then(() => order.push('a'));
    const b = budget.take().then(() => order.push('b'));
    budget.release();
    await a;
    expect(order).toEqual(['a']);
    budget.release();
    await b;
    expect(order).toEqual(['a', 'b']);
    budget.release();
    expect(budget.inUse).toBe(0);
  });
});
