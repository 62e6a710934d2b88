import { FeatureRow } from '@app/features';
import { INITIAL_ARENA_ROWS, ItemArena } from './item-arena';

const row = (price: number): FeatureRow => ({ price });

describe('ItemArena', () => {
  it('keeps a row in a slot of its own and finds it by the row object', () => {
    const arena = new ItemArena();
    arena.reset(3);
    const a = row(1);
    const b = row(1);
    const keptA = arena.keep(a, 'i1');
    const keptB = arena.keep(b, 'i2');
    expect([keptA.at, keptB.at]).toEqual([0, 3]);
    expect(arena.find(a)).toBe(keptA);
    expect(arena.find(b)).toEqual({ id: 'i2', at: 3 });
    expect(arena.find(row(1))).toBeUndefined();
    expect(arena.rows).toBe(2);
  });

  it('hands a forgotten slot out again before growing', () => {
    const arena = new ItemArena();
    arena.reset(2);
    const a = row(1);
    const kept = arena.keep(a, 'i1');
    arena.keep(row(2), 'i2');
    arena.forget(a, kept);
    expect(arena.find(a)).toBeUndefined();
    expect(arena.keep(row(3), 'i3').at).toBe(kept.at);
    expect(arena.rows).toBe(2);
  });

  it('grows by doubling, cells kept, the old arrays left as they were', () => {
    const arena = new ItemArena();
    arena.reset(2);
    const first = arena.cells;
    const kept = [];
    for (let i = 0; i < INITIAL_ARENA_ROWS; i++) {
      const k = arena.keep(row(i), `i${i}`);
      arena.cells.floats[k.at] = i + 0.5;
      arena.cells.ints[k.at + 1] = i;
      kept.push(k);
    }
    expect(arena.cells).toBe(first);
    arena.keep(row(-1), 'grown');
    expect(arena.cells).not.toBe(first);
    expect(arena.cells.ints.length).toBe(2 * first.ints.length);
    for (const [i, k] of kept.entries()) {
      expect(arena.cells.floats[k.at]).toBe(i + 0.5);
      expect(arena.cells.ints[k.at + 1]).toBe(i);
    }
    expect(first.floats[kept[7].at]).toBe(7.5);
  });

  it('gives each key string one code, in the order they come', () => {
    const arena = new ItemArena();
    arena.reset(1);
    expect(['a', 'b', 'a', 'c', 'b'].map((t) => arena.keyCode(t))).toEqual([0, 1, 0, 2, 1]);
    expect(arena.texts).toEqual(['a', 'b', 'c']);
  });

  it('starts over empty, with a token no earlier arena had', () => {
    const arena = new ItemArena();
    const other = new ItemArena();
    arena.reset(2);
    other.reset(2);
    const a = row(1);
    arena.keep(a, 'i1');
    arena.keyCode('k');
    const tokens = new Set([arena.token, other.token]);
    arena.reset(4);
    expect(tokens.has(arena.token)).toBe(false);
    expect(arena.find(a)).toBeUndefined();
    expect([arena.rows, arena.texts.length, arena.width]).toEqual([0, 0, 4]);
    expect(arena.keep(row(2), 'i2').at).toBe(0);
  });
});
