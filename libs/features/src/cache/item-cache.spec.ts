import fc from 'fast-check';
import { setTimeout as sleep } from 'node:timers/promises';
import { Registry } from 'prom-client';
import { emptyItemMemos, FeatureRow, ItemHolder } from '../feature-row';
import { FeaturesMetrics } from '../features.metrics';
import {
  CachedItem,
  ItemCache,
  ItemCacheOptions,
  UPDATE_MEMORY_MAX_ENTRIES,
  UPDATE_MEMORY_MS,
} from './item-cache';

const roomy: ItemCacheOptions = { maxEntries: 1000, maxBytes: 1_000_000, ttlMs: 60_000 };

/** `row` null: a known-absent item (undefined row); omitted: a small row. */
const item = (ts: number, row: CachedItem['row'] | null = { ts }, bytes = 10): CachedItem => ({
  row: row ?? undefined,
  ts,
  bytes,
});

describe('ItemCache', () => {
  describe('heldRows (what a new bundle version warms its item side from)', () => {
    it('lists the rows cached, most recent first, without absent ids, stale rows or a change of recency', () => {
      // lru-cache reads a start time of 0 as none: the clock starts at 1.
      let now = 1;
      const cache = new ItemCache({
        ...roomy,
        maxEntries: 3,
        ttlMs: 1000,
        clock: { now: () => now },
      });
      cache.fill('old', item(1, { v: 'old' }));
      now = 2001; // 'old' is past its TTL from here on
      cache.fill('a', item(1, { v: 'a' }));
      cache.fill('gone', item(1, null));
      cache.fill('b', item(1, { v: 'b' }));
      expect(cache.get('a')?.row).toEqual({ v: 'a' });
      expect([...cache.heldRows()]).toEqual([
        ['a', { v: 'a' }],
        ['b', { v: 'b' }],
      ]);
      // Listing touched nothing: 'b' is still the least recently used of the live rows.
      cache.fill('c', item(1));
      cache.fill('d', item(1));
      expect(cache.get('b')).toBeUndefined();
      expect(cache.get('a')).toBeDefined();
    });
  });

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
      cache.fill('a', item(1, { x: 1 }, 0));
      cache.fill('b', item(1, { x: 2 }, 0));
      cache.fill('c', item(1, { x: 3 }, 0));
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
      expect(cache.get('nope')).toMatchObject({ row: undefined, ts: 0, bytes: 16 });
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

    it('drops a cached known-absent item on an update: the next read says what Redis took', () => {
      // The id may be absent because its key is corrupt or of another type, which the writer
      // refuses (dead-letters): inventing a row from the update would disagree with Redis.
      const cache = new ItemCache(roomy);
      cache.fill('new', item(0, null, 16));
      expect(cache.applyUpdate('new', { price: 7 }, 1)).toBe(false);
      expect(cache.get('new')).toBeUndefined();
      expect(cache.negativeSize).toBe(0);
      // A read from before the writer applied the update is not cached; the written row is.
      expect(cache.fill('new', item(0, null, 16))).toBe(false);
      expect(cache.fill('new', item(1, { price: 7 }))).toBe(true);
    });

    it('remembers the newest update only: an older update after a newer one changes nothing', () => {
      const cache = new ItemCache(roomy);
      cache.applyUpdate('a', { v: 1 }, 20);
      cache.applyUpdate('a', { v: 1 }, 15);
      expect(cache.fill('a', item(17))).toBe(false);
      expect(cache.fill('a', item(20))).toBe(true);
    });
  });
  describe('bounds that an update or a flood cannot defeat', () => {
    /** A clock the spec moves by hand (lru-cache's TTLs read it too). */
    const fakeClock = () => {
      let t = 1_000;
      return { now: () => t, advance: (ms: number) => (t += ms) };
    };

    it('keeps the original expiry of a row an update is merged into', () => {
      const clock = fakeClock();
      const cache = new ItemCache({ ...roomy, ttlMs: 100, clock });
      cache.fill('a', item(1, { price: 1 }));
      clock.advance(60);
      expect(cache.applyUpdate('a', { price: 2 }, 2)).toBe(true);
      clock.advance(30);
      expect(cache.get('a')?.row).toEqual({ price: 2 });
      clock.advance(20); // 110 ms after the fill: expired, although updated 50 ms ago
      expect(cache.get('a')).toBeUndefined();
    });

    it('bounds ids cached as absent on their own: a flood of unknown ids keeps the hot rows', () => {
      const onEvict = jest.fn();
      const cache = new ItemCache({ ...roomy, maxEntries: 10, maxNegativeEntries: 5 }, onEvict);
      for (let i = 0; i < 10; i++) cache.fill(`hot${i}`, item(1, { i }));
      for (let i = 0; i < 1000; i++) cache.fill(`unknown${i}`, item(0, null, 16));

      for (let i = 0; i < 10; i++) expect(cache.get(`hot${i}`)?.row).toEqual({ i });
      expect(cache.size).toBe(10);
      expect(cache.negativeSize).toBe(5);
      expect(cache.get('unknown999')).toMatchObject({ row: undefined, ts: 0, bytes: 16 });
      expect(cache.get('unknown0')).toBeUndefined();
      expect(onEvict).not.toHaveBeenCalled();
    });

    it('caches no absent id with maxNegativeEntries 0', () => {
      const cache = new ItemCache({ ...roomy, maxNegativeEntries: 0 });
      expect(cache.fill('nope', item(0, null, 16))).toBe(false);
      expect(cache.get('nope')).toBeUndefined();
    });

    it('a row found again replaces its absent entry, and an absent read replaces a row', () => {
      const cache = new ItemCache(roomy);
      cache.fill('a', item(0, null, 16));
      cache.fill('a', item(1, { v: 1 }));
      expect(cache.negativeSize).toBe(0);
      expect(cache.get('a')?.row).toEqual({ v: 1 });
      cache.invalidate('a');
      cache.fill('a', item(0, null, 16));
      expect(cache.size).toBe(0);
      expect(cache.get('a')?.row).toBeUndefined();
    });

    it('refuses a late reply that started before an update it has since forgotten (evicted)', () => {
      const clock = fakeClock();
      const cache = new ItemCache({ ...roomy, clock });
      const readStartedAt = cache.now();
      clock.advance(1);
      cache.applyUpdate('x', { v: 10 }, 10);
      clock.advance(1);
      // Enough other updates to evict x's update time from memory.
      for (let i = 0; i < UPDATE_MEMORY_MAX_ENTRIES; i++)
        cache.applyUpdate(`other${i}`, { v: 1 }, 1);

      // The reply of the read that raced x's update comes back late, with the row from before it.
      expect(cache.fill('x', item(5, { v: 5 }), readStartedAt)).toBe(false);
      expect(cache.get('x')).toBeUndefined();
      // A read sent after the update was seen is cached, and so is any row, however old its _ts.
      expect(cache.fill('x', item(10, { v: 10 }), cache.now())).toBe(true);
      expect(cache.fill('never-updated', item(1, { v: 1 }), cache.now())).toBe(true);
    });

    it('refuses a reply that started before an update older than the memory holds (expired)', () => {
      const clock = fakeClock();
      const cache = new ItemCache({ ...roomy, ttlMs: 10 * UPDATE_MEMORY_MS, clock });
      const readStartedAt = cache.now();
      clock.advance(1);
      cache.applyUpdate('x', { v: 10 }, 10);
      clock.advance(UPDATE_MEMORY_MS + 1);

      expect(cache.fill('x', item(5, { v: 5 }), readStartedAt)).toBe(false);
      expect(cache.fill('x', item(5, { v: 5 }), cache.now())).toBe(true);
    });

    it('shows the ids cached as absent in a gauge', async () => {
      const registry = new Registry();
      const metrics = new FeaturesMetrics(registry);
      const cache = new ItemCache(roomy);
      metrics.watchCache(cache);
      cache.fill('nope1', item(0, null, 16));
      cache.fill('nope2', item(0, null, 16));
      cache.fill('row', item(1));
      const text = await registry.metrics();
      expect(text).toMatch(/^ranker_features_cache_negative_entries 2$/m);
      expect(text).toMatch(/^ranker_features_cache_entries 1$/m);
    });
  });

  describe("lookup (a request's ids at once, through the id index)", () => {
    /** What lookup gives for `ids`, row by row, as comparable values. */
    function looked(cache: ItemCache, ids: string[], now = cache.now()) {
      const items = new Array<FeatureRow | undefined>(ids.length);
      const holders = new Array<ItemHolder | undefined>(ids.length);
      const memos = emptyItemMemos(ids.length);
      const misses = cache.lookup(ids, now, items, holders, memos);
      return { items, holders, keys: [...memos.keys], values: [...memos.values], misses };
    }

    /** The same from `get`, id by id, as the fetch did before the index. */
    function got(cache: ItemCache, ids: string[], now = cache.now()) {
      const hits = ids.map((id) => cache.get(id, now));
      const valid = (h: ItemHolder | undefined) => h?.row !== undefined && h.memoRow === h.row;
      return {
        items: hits.map((h) => h?.row),
        holders: hits,
        keys: hits.map((h) => (valid(h) ? h!.memoKey : 0)),
        values: hits.map((h) => (valid(h) ? h!.memoValue : 0)),
        misses: ids.flatMap((_, i) => (hits[i] === undefined ? [i] : [])),
      };
    }

    it('answers as get does: rows, holders, memos, misses, absent ids, long and wide ids', () => {
      const cache = new ItemCache(roomy);
      const long = 'x'.repeat(40);
      for (const id of ['a', 'b', long, 'caf\u0113']) cache.fill(id, item(1));
      cache.fill('gone', item(1, null));
      const ids = ['a', 'nope', long, 'gone', 'caf\u0113', 'b'];
      const result = looked(cache, ids);
      expect(result).toEqual(got(cache, ids));
      expect(result.misses).toEqual([1]);
      expect(result.holders[0]).toBe(cache.get('a'));
    });

    it('hands out the memo a consumer wrote on the holder, only while it is for the row held', () => {
      const cache = new ItemCache(roomy);
      cache.fill('a', item(1));
      const holder = cache.get('a')!;
      Object.assign(holder, { memoRow: holder.row, memoKey: 3, memoValue: 96 });
      expect(looked(cache, ['a'])).toMatchObject({ keys: [3], values: [96] });
      holder.memoRow = { other: 1 };
      expect(looked(cache, ['a'])).toMatchObject({ keys: [0], values: [0] });
      // An update is a new holder: no memo until its consumer writes one.
      holder.memoRow = holder.row;
      cache.applyUpdate('a', { price: 2 }, 5);
      const after = looked(cache, ['a']);
      expect(after.holders[0]).not.toBe(holder);
      expect(after).toMatchObject({ keys: [0], values: [0] });
    });

    it('expires rows as get does', () => {
      let now = 1;
      const cache = new ItemCache({ ...roomy, ttlMs: 100, clock: { now: () => now } });
      cache.fill('a', item(1));
      now = 100;
      expect(looked(cache, ['a']).misses).toEqual([]);
      now = 101;
      expect(looked(cache, ['a']).misses).toEqual([0]);
      expect(cache.size).toBe(0);
    });

    it('moves no row below half its bounds, and keeps least-recently-used eviction past half', () => {
      // Below half: a hit moves nothing, so eviction later follows the order rows came in.
      const below = new ItemCache({ ...roomy, maxEntries: 10 });
      for (const id of ['a', 'b', 'c', 'd']) below.fill(id, item(1));
      looked(below, ['a']);
      expect([...below.heldRows()].map(([id]) => id)).toEqual(['d', 'c', 'b', 'a']);
      // At half: a hit on a row outside the newest quarter moves it.
      const half = new ItemCache({ ...roomy, maxEntries: 8 });
      for (const id of ['a', 'b', 'c', 'd']) half.fill(id, item(1));
      looked(half, ['a']);
      expect([...half.heldRows()].map(([id]) => id)).toEqual(['a', 'd', 'c', 'b']);
      for (const id of ['e', 'f', 'g', 'h', 'i']) half.fill(id, item(1));
      expect(half.get('a')).toBeDefined();
      expect(half.get('b')).toBeUndefined();
    });

    it('agrees with get through fills, updates, invalidations, clears, expiry and memos (fuzz)', () => {
      const id = fc.oneof(
        fc.integer({ min: 0, max: 40 }).map((n) => `r${n}`),
        fc.constantFrom('x'.repeat(33), 'caf\u0113', ''),
      );
      const op = fc.oneof(
        fc.record({ kind: fc.constant('fill' as const), id, absent: fc.boolean(), ts: fc.nat(50) }),
        fc.record({ kind: fc.constant('update' as const), id, ts: fc.nat(50) }),
        fc.record({ kind: fc.constant('invalidate' as const), id }),
        fc.record({ kind: fc.constant('memo' as const), id, key: fc.integer({ min: 1, max: 9 }) }),
        fc.record({ kind: fc.constant('tick' as const), ms: fc.nat(40) }),
        fc.record({ kind: fc.constant('clear' as const) }),
      );
      fc.assert(
        fc.property(
          fc.array(op, { maxLength: 300, size: 'max' }),
          fc.integer({ min: 2, max: 30 }),
          (ops, max) => {
            let now = 1;
            const cache = new ItemCache({
              maxEntries: max,
              maxBytes: 1_000_000,
              ttlMs: 100,
              clock: { now: () => now },
            });
            const ids = [
              ...Array.from({ length: 41 }, (_, n) => `r${n}`),
              'x'.repeat(33),
              'caf\u0113',
            ];
            for (const o of ops) {
              if (o.kind === 'fill') cache.fill(o.id, item(o.ts, o.absent ? null : { v: o.ts }));
              else if (o.kind === 'update') cache.applyUpdate(o.id, { v: o.ts }, o.ts);
              else if (o.kind === 'invalidate') cache.invalidate(o.id);
              else if (o.kind === 'clear') cache.clear();
              else if (o.kind === 'tick') now += o.ms;
              else {
                const holder = cache.get(o.id);
                if (holder !== undefined)
                  Object.assign(holder, {
                    memoRow: holder.row,
                    memoKey: o.key,
                    memoValue: o.key * 10,
                  });
              }
              // lookup first: an expired row it meets is dropped, as get would drop it.
              const viaLookup = looked(cache, ids, now);
              expect(viaLookup).toEqual(got(cache, ids, now));
            }
          },
        ),
        { numRuns: 80 },
      );
    });
  });
});
