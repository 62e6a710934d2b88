import { WrongTypeCheck } from './wrong-type-check';

/** A TYPE that answers from a table once released (each call waits for `release`). */
function typeTable(types: Record<string, string>) {
  const asked: string[] = [];
  let release!: () => void;
  let gate = new Promise<void>((resolve) => (release = resolve));
  return {
    asked,
    typeOf: async (key: string) => {
      asked.push(key);
      await gate;
      if (types[key] === 'fail') throw new Error('connection lost');
      return types[key] ?? 'none';
    },
    release: () => release(),
    reset: () => (gate = new Promise<void>((resolve) => (release = resolve))),
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('WrongTypeCheck', () => {
  it('reports keys of another type with their type; strings and missing keys not', async () => {
    const table = typeTable({ h: 'hash', l: 'list', s: 'string' });
    const found: string[] = [];
    const check = new WrongTypeCheck(table.typeOf, (key, type) => found.push(`${key}:${type}`));
    check.offer(['h', 'missing', 's', 'l']);
    expect(check.busy).toBe(true);
    table.release();
    await settle();
    expect(check.busy).toBe(false);
    expect(found).toEqual(['h:hash', 'l:list']);
  });

  it('checks at most maxKeys a window, one check at a time; a new window takes more', async () => {
    const table = typeTable({});
    let now = 0;
    const check = new WrongTypeCheck(
      table.typeOf,
      () => undefined,
      { maxKeys: 3, windowMs: 1000 },
      { now: () => now },
    );
    check.offer(['a', 'b']);
    check.offer(['c']); // a check is running: not taken
    table.release();
    await settle();
    check.offer(['d', 'e', 'f']); // one key left in this window
    await settle();
    now = 1000;
    table.reset();
    check.offer(['g', 'h', 'i', 'j']);
    table.release();
    await settle();
    expect(table.asked).toEqual(['a', 'b', 'd', 'g', 'h', 'i']);
  });

  it('a failed TYPE reports nothing and never rejects; the next offer is checked', async () => {
    const table = typeTable({ x: 'fail', y: 'hash' });
    const found: string[] = [];
    const check = new WrongTypeCheck(table.typeOf, (key) => found.push(key));
    check.offer(['x', 'y']);
    table.release();
    await settle();
    expect(found).toEqual(['y']);
    check.offer(['y']);
    await settle();
    expect(found).toEqual(['y', 'y']);
  });
});
