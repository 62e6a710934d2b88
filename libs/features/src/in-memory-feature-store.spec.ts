import { InMemoryFeatureStore } from './in-memory-feature-store';

describe('InMemoryFeatureStore', () => {
  const store = new InMemoryFeatureStore([
    { entity: 'user', id: 'u1', fields: { age: 25 } },
    { entity: 'item', id: 'i1', fields: { price: 1 } },
    { entity: 'item', id: 'i2', fields: { price: 2 } },
    { entity: 'item', id: 'i3', fields: { price: 3 } },
    { entity: 'item', id: 'u1', fields: { price: 99 } },
  ]);

  it('holds every item row, the same objects a fetch returns (what a new version warms from)', async () => {
    const held = [...store.heldItems()];
    expect(held.map(([id]) => id)).toEqual(['i1', 'i2', 'i3', 'u1']);
    const fetched = await store.fetch('u1', ['i2']);
    expect(fetched.items[0]).toBe(held[1][1]);
  });

  it("hands out each row's holder: the same one on every fetch, a new one once the row is replaced", async () => {
    const s = new InMemoryFeatureStore([{ entity: 'item', id: 'i1', fields: { price: 1 } }]);
    const first = await s.fetch('u1', ['i1', 'nope', 'i1']);
    expect(first.itemHolders?.[0]?.row).toBe(first.items[0]);
    expect(first.itemHolders?.[1]).toBeUndefined();
    expect(first.itemHolders?.[2]).toBe(first.itemHolders?.[0]);
    expect((await s.fetch('u1', ['i1'])).itemHolders?.[0]).toBe(first.itemHolders?.[0]);
    s.put({ entity: 'item', id: 'i1', fields: { price: 2 } });
    const replaced = await s.fetch('u1', ['i1']);
    expect(replaced.itemHolders?.[0]).not.toBe(first.itemHolders?.[0]);
    expect(replaced.itemHolders?.[0]?.row).toEqual({ price: 2 });
  });

  it("copies each holder's memo for the row handed out, key 0 for any other", async () => {
    const s = new InMemoryFeatureStore([
      { entity: 'item', id: 'i1', fields: { price: 1 } },
      { entity: 'item', id: 'i2', fields: { price: 2 } },
    ]);
    const [h1, h2] = (await s.fetch('u1', ['i1', 'i2'])).itemHolders!;
    Object.assign(h1!, { memoRow: h1!.row, memoKey: 7, memoValue: 40 });
    // A memo for a row the holder no longer hands out.
    Object.assign(h2!, { memoRow: { price: 0 }, memoKey: 7, memoValue: 80 });
    const { itemMemos } = await s.fetch('u1', ['i1', 'nope', 'i2', 'i1']);
    expect(Array.from(itemMemos!.keys)).toEqual([7, 0, 0, 7]);
    expect(Array.from(itemMemos!.values)).toEqual([40, 0, 0, 40]);
  });

  it('serves ids its index cannot hold (long, or a character above 255) from its map alike', async () => {
    const long = 'x'.repeat(40);
    const s = new InMemoryFeatureStore([
      { entity: 'item', id: long, fields: { price: 1 } },
      { entity: 'item', id: 'caf\u0113', fields: { price: 2 } },
      { entity: 'item', id: 'i1', fields: { price: 3 } },
    ]);
    const first = await s.fetch('u1', [long, 'caf\u0113', 'i1']);
    expect(first.items).toEqual([{ price: 1 }, { price: 2 }, { price: 3 }]);
    for (const h of first.itemHolders!)
      Object.assign(h!, { memoRow: h!.row, memoKey: 2, memoValue: 9 });
    const again = await s.fetch('u1', [long, 'caf\u0113', 'i1']);
    expect(Array.from(again.itemMemos!.keys)).toEqual([2, 2, 2]);
    expect(again.itemHolders).toEqual(first.itemHolders);
    s.put({ entity: 'item', id: 'i1', fields: { price: 4 } });
    const replaced = await s.fetch('u1', ['i1']);
    expect(replaced.items).toEqual([{ price: 4 }]);
    expect(Array.from(replaced.itemMemos!.keys)).toEqual([0]);
  });

  it('returns items in the order of the ids asked for', async () => {
    expect(await store.getItems(['i3', 'i1', 'i2'])).toEqual([
      { price: 3 },
      { price: 1 },
      { price: 2 },
    ]);
  });

  it('returns undefined in place of unknown ids, keeping positions', async () => {
    expect(await store.getItems(['nope', 'i2', 'also-nope', 'i1'])).toEqual([
      undefined,
      { price: 2 },
      undefined,
      { price: 1 },
    ]);
  });

  it('answers a repeated id at every position', async () => {
    expect(await store.getItems(['i1', 'i1'])).toEqual([{ price: 1 }, { price: 1 }]);
  });

  it('answers an empty list with an empty list', async () => {
    expect(await store.getItems([])).toEqual([]);
  });

  it('returns a user by id and undefined for an unknown user', async () => {
    expect(await store.getUser('u1')).toEqual({ age: 25 });
    expect(await store.getUser('u2')).toBeUndefined();
  });

  it('keeps users and items apart even with the same id', async () => {
    expect(await store.getUser('u1')).toEqual({ age: 25 });
    expect(await store.getItems(['u1'])).toEqual([{ price: 99 }]);
    expect(await store.getUser('i1')).toBeUndefined();
    expect(store.size).toEqual({ users: 1, items: 4 });
  });

  it('replaces a record put again with the same id', async () => {
    const s = new InMemoryFeatureStore();
    s.put({ entity: 'item', id: 'i1', fields: { price: 1 } });
    s.put({ entity: 'item', id: 'i1', fields: { price: 2 } });
    expect(await s.getItems(['i1'])).toEqual([{ price: 2 }]);
    expect(s.size).toEqual({ users: 0, items: 1 });
  });

  it('resolves ids named like Object.prototype members to nothing, or to their own rows', async () => {
    const names = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'];
    expect(await store.getItems(names)).toEqual(names.map(() => undefined));
    expect(await store.getUser('constructor')).toBeUndefined();
    expect(await store.getUser('__proto__')).toBeUndefined();

    const seeded = new InMemoryFeatureStore([
      { entity: 'item', id: '__proto__', fields: { price: 5 } },
      { entity: 'user', id: 'constructor', fields: { age: 9 } },
    ]);
    expect(await seeded.getItems(['__proto__', 'toString'])).toEqual([{ price: 5 }, undefined]);
    expect(await seeded.getUser('constructor')).toEqual({ age: 9 });
  });
});
