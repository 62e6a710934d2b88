import { CoreBudget } from './core-budget';

describe('CoreBudget', () => {
  it('counts the slots acquired and given back', () => {
    const budget = new CoreBudget(2);
    budget.acquire();
    expect(budget.inUse).toBe(1);
    expect(budget.hasFree).toBe(true);
    budget.acquire();
    expect(budget.hasFree).toBe(false);
    budget.release();
    budget.release();
    expect(budget.inUse).toBe(0);
    expect(budget.hasFree).toBe(true);
  });

  it('wakes every subscriber after each release, until it unsubscribes', () => {
    const budget = new CoreBudget(1);
    const woken: number[] = [];
    const unsubscribe = budget.subscribe(() => woken.push(budget.inUse));
    budget.acquire();
    expect(woken).toEqual([]);
    budget.release();
    expect(woken).toEqual([0]);
    unsubscribe();
    budget.acquire();
    budget.release();
    expect(woken).toEqual([0]);
  });
});
