import { RowLru } from './row-lru';

const item = (bytes = 1) => ({ row: {}, ts: 0, bytes });
const ids = (lru: RowLru) => [...lru.entries()].map((held) => held.id);

describe('RowLru', () => {
  it('lists entries from the most recent and evicts the least recent past maxEntries', () => {
    const onEvict = jest.fn();
    const lru = new RowLru(3, 1000, onEvict);
    for (const id of ['a', 'b', 'c', 'd']) lru.set(id, item(), Infinity);
    expect(ids(lru)).toEqual(['d', 'c', 'b']);
    expect(lru.peek('a')).toBeUndefined();
    expect(onEvict).toHaveBeenCalledTimes(1);
  });

  it('moves a touched entry to the recent end once a quarter of the entries moved past it', () => {
    const lru = new RowLru(100, 1000);
    for (let i = 0; i < 8; i++) lru.set(`r${i}`, item(), Infinity);
    // r6 is among the newest quarter (2 of 8): touching it changes nothing.
    lru.touch(lru.peek('r6')!);
    expect(ids(lru).slice(0, 2)).toEqual(['r7', 'r6']);
    // r1 is not: it moves to the recent end, and is then the last to be evicted.
    lru.touch(lru.peek('r1')!);
    expect(ids(lru)).toEqual(['r1', 'r7', 'r6', 'r5', 'r4', 'r3', 'r2', 'r0']);
  });

  it('keeps the list and the map in step through sets, touches and deletes', () => {
    const lru = new RowLru(5, 1000);
    for (let step = 0; step < 500; step++) {
      const id = `r${(step * 7919) % 9}`;
      const op = (step * 31) % 4;
      const held = lru.peek(id);
      const deleting = op === 0 && held !== undefined;
      if (deleting) lru.delete(id);
      else if (op === 1 && held) lru.touch(held);
      else {
        lru.set(id, item(), step);
        expect(ids(lru)[0]).toBe(id);
      }
      // Every listed entry once, each the map's entry for its id, as many as the map holds.
      const listed = [...lru.entries()];
      expect(new Set(listed.map((h) => h.id)).size).toBe(listed.length);
      expect(listed.length).toBe(lru.size);
      expect(lru.size).toBeLessThanOrEqual(5);
      for (const h of listed) expect(lru.peek(h.id)).toBe(h);
      if (deleting) expect(lru.peek(id)).toBeUndefined();
    }
  });

  it('bounds the bytes held, counting each entry as at least one byte', () => {
    const lru = new RowLru(100, 10);
    lru.set('a', item(4), Infinity);
    lru.set('b', item(0), Infinity);
    lru.set('c', item(6), Infinity);
    expect(lru.bytes).toBe(7);
    expect(ids(lru)).toEqual(['c', 'b']);
  });

  it('does not hold an item larger than maxBytes, and drops the entry it was to replace', () => {
    const lru = new RowLru(100, 10);
    lru.set('a', item(4), Infinity);
    lru.set('a', item(11), Infinity);
    expect(lru.peek('a')).toBeUndefined();
    expect(lru.bytes).toBe(0);
  });

  it('clear drops everything', () => {
    const lru = new RowLru(100, 10);
    lru.set('a', item(4), Infinity);
    lru.clear();
    expect([lru.size, lru.bytes, ids(lru)]).toEqual([0, 0, []]);
  });
});
