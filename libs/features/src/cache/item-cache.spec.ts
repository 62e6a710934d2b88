import { setTimeout as sleep } from 'node:timers/promises';
import { CachedItem, ItemCache, ItemCacheOptions } from './item-cache';

const roomy: ItemCacheOptions = { maxEntries: 1000, maxBytes: 1_000_000, ttlMs: 60_000 };

/** `row` null: a known-absent item (undefined row); omitted: a small row. */
const item = (ts: number, row: CachedItem['row'] | null = { ts }, bytes = 10): CachedItem => ({
  row: row ?? undefined,
  ts,
  bytes,
});

describe('ItemCache', () => {
  describe('bounds (LRU)', () => {
    it('evicts the least recently used entry past maxEntries, calling onEvict', () => {
      const onEvict = jest.fn();
      const cache = new ItemCache({ ...roomy, maxEntries: 2 }, onEvict);
      cache.fill('a', item(1));
      cache.fill('b', item(1));
      expect(cache.get('a')).toBeDefined(); // a is now more recent than b
      cache.fill('c', item(1));

      expect(cache.get('b')).toBeUndefined();
      expect(cache.get('a')).toBeDefined();
      expect(cache.get('c')).toBeDefined();
      expect(cache.size).toBe(2);
      expect(onEvict).toHaveBeenCalledTimes(1);
    });

    it('evicts past maxBytes by the items’ byte sizes, calling onEvict per evicted item', () => {
      const onEvict = jest.fn();
      const cache = new ItemCache({ ...roomy, maxBytes: 100 }, onEvict);
      cache.fill('a', item(1, { x: 1 }, 40));
      cache.fill('b', item(1, { x: 2 }, 40));
      expect(cache.bytes).toBe(80);
      expect(onEvict).not.toHaveBeenCalled();

      cache.fill('c', item(1, { x: 3 }, 40));
      expect(cache.get('a')).toBeUndefined();
      expect(cache.bytes).toBe(80);
      expect(onEvict).toHaveBeenCalledTimes(1);

      cache.fill('d', item(1, { x: 4 }, 90)); // needs room of both b and c
      expect(cache.get('b')).toBeUndefined();
      expect(cache.get('c')).toBeUndefined();
      expect(cache.get('d')?.row).toEqual({ x: 4 });
      expect(cache.bytes).toBe(90);
      expect(onEvict).toHaveBeenCalledTimes(3);
    });

    it('counts an item as at least one byte, so an empty blob cannot slip past maxBytes', () => {
      const cache = new ItemCache({ ...roomy, maxBytes: 2 });
      cache.fill('a', item(1, null, 0));
      cache.fill('b', item(1, null, 0));
      cache.fill('c', item(1, null, 0));
      expect(cache.size).toBe(2);
      expect(cache.bytes).toBe(2);
    });

    it('does not cache an item larger than maxBytes', () => {
      const cache = new ItemCache({ ...roomy, maxBytes: 50 });
      cache.fill('huge', item(1, { x: 1 }, 51));
      expect(cache.get('huge')).toBeUndefined();
      expect(cache.size).toBe(0);
    });
  });

  describe('TTL', () => {
    it('expires entries after ttlMs without counting them as evictions', async () => {
      const onEvict = jest.fn();
      const cache = new ItemCache({ ...roomy, ttlMs: 30 }, onEvict);
      cache.fill('a', item(1));
      expect(cache.get('a')).toBeDefined();
      await sleep(80);
      expect(cache.get('a')).toBeUndefined();
      expect(onEvict).not.toHaveBeenCalled();
    });

    it('lets a refilled entry live a full ttl again', async () => {
      const cache = new ItemCache({ ...roomy, ttlMs: 100 });
      cache.fill('a', item(1));
      await sleep(60);
      cache.fill('a', item(2));
      await sleep(60);
      expect(cache.get('a')?.ts).toBe(2);
    });
  });

  describe('hits', () => {
    it('returns the cached row object itself (a hit parses nothing)', () => {
      const cache = new ItemCache(roomy);
      const row = { price: 9.99, category: 'c1' };
      cache.fill('a', item(1, row));
      expect(cache.get('a')?.row).toBe(row);
      expect(cache.get('a')?.row).toBe(row);
    });

    it('keeps a known-absent item (row undefined) as a hit', () => {
      const cache = new ItemCache(roomy);
      cache.fill('nope', item(0, null, 16));
      expect(cache.get('nope')).toEqual({ row: undefined, ts: 0, bytes: 16 });
    });

    it('invalidate drops one entry, clear drops all', () => {
      const cache = new ItemCache(roomy);
      cache.fill('a', item(1));
      cache.fill('b', item(1));
      cache.invalidate('a');
      expect(cache.get('a')).toBeUndefined();
      expect(cache.get('b')).toBeDefined();
      cache.clear();
      expect(cache.size).toBe(0);
      expect(cache.bytes).toBe(0);
    });
  });

  describe('fill', () => {
    it('refuses a row older than the cached one and keeps the cached one', () => {
      const cache = new ItemCache(roomy);
      expect(cache.fill('a', item(5, { v: 5 }))).toBe(true);
      expect(cache.fill('a', item(3, { v: 3 }))).toBe(false);
      expect(cache.get('a')).toMatchObject({ ts: 5, row: { v: 5 } });
    });

    it('accepts a row as new as or newer than the cached one', () => {
      const cache = new ItemCache(roomy);
      cache.fill('a', item(5, { v: 5 }));
      expect(cache.fill('a', item(5, { v: 55 }))).toBe(true);
      expect(cache.get('a')?.row).toEqual({ v: 55 });
      expect(cache.fill('a', item(6, { v: 6 }))).toBe(true);
      expect(cache.get('a')?.row).toEqual({ v: 6 });
    });

    it('refuses a row older than an update already seen, even when nothing is cached', () => {
      const cache = new ItemCache(roomy);
      // The update arrives while the item is not cached: nothing to merge, but it is remembered.
      expect(cache.applyUpdate('a', { v: 10 }, 10)).toBe(false);
      expect(cache.get('a')).toBeUndefined();

      // A read that raced the update returns the row as it was before it: not cached.
      expect(cache.fill('a', item(7, { v: 7 }))).toBe(false);
      expect(cache.get('a')).toBeUndefined();

      // The row that includes the update (same ts) or a newer one is cached.
      expect(cache.fill('a', item(10, { v: 10 }))).toBe(true);
      expect(cache.get('a')?.row).toEqual({ v: 10 });
    });
  });

  describe('applyUpdate', () => {
    it('merges the update’s fields into a cached row only when newer, and says whether it did', () => {
      const cache = new ItemCache(roomy);
      cache.fill('a', item(5, { price: 1, category: 'c1' }));

      expect(cache.applyUpdate('a', { price: 2 }, 4)).toBe(false);
      expect(cache.applyUpdate('a', { price: 3 }, 5)).toBe(false);
      expect(cache.get('a')).toMatchObject({ ts: 5, row: { price: 1, category: 'c1' } });

      expect(cache.applyUpdate('a', { price: 4, brand: 'b9' }, 6)).toBe(true);
      const merged = cache.get('a');
      expect(merged?.ts).toBe(6);
      expect(merged?.row).toEqual({ price: 4, category: 'c1', brand: 'b9' });
      expect(merged?.bytes).toBe(JSON.stringify(merged?.row).length);
    });

    it('does not mutate the row object it replaces (readers may still hold it)', () => {
      const cache = new ItemCache(roomy);
      const before = { price: 1 };
      cache.fill('a', item(1, before));
      cache.applyUpdate('a', { price: 2 }, 2);
      expect(before).toEqual({ price: 1 });
      expect(cache.get('a')?.row).toEqual({ price: 2 });
    });

    it('turns a cached known-absent item into the update’s fields', () => {
      const cache = new ItemCache(roomy);
      cache.fill('new', item(0, null, 16));
      expect(cache.applyUpdate('new', { price: 7 }, 1)).toBe(true);
      expect(cache.get('new')).toMatchObject({ ts: 1, row: { price: 7 } });
    });

    it('remembers the newest update only: an older update after a newer one changes nothing', () => {
      const cache = new ItemCache(roomy);
      cache.applyUpdate('a', { v: 1 }, 20);
      cache.applyUpdate('a', { v: 1 }, 15);
      expect(cache.fill('a', item(17))).toBe(false);
      expect(cache.fill('a', item(20))).toBe(true);
    });
  });
});
