import { OffsetWindow } from './offset-window';

describe('OffsetWindow', () => {
  const setUp = (offsets: string[]) => {
    const resolved: string[] = [];
    const window = new OffsetWindow(offsets, (offset) => resolved.push(offset));
    return { window, resolved };
  };

  it('resolves offsets in order as messages finish in order', () => {
    const { window, resolved } = setUp(['10', '11', '12']);
    window.complete(0);
    window.complete(1);
    window.complete(2);
    expect(resolved).toEqual(['10', '11', '12']);
    expect(window.resolved).toBe(3);
  });

  it('holds back every offset behind a message not done, then resolves the done prefix at once', () => {
    const { window, resolved } = setUp(['5', '6', '7', '8']);
    window.complete(2);
    window.complete(1);
    expect(resolved).toEqual([]);
    window.complete(0);
    expect(resolved).toEqual(['7']);
    expect(window.resolved).toBe(3);
  });

  it('never resolves past a message that never completes', () => {
    const { window, resolved } = setUp(['0', '1', '2']);
    window.complete(0);
    window.complete(2);
    expect(resolved).toEqual(['0']);
    expect(window.resolved).toBe(1);
  });

  it('resolves the same as an in-order model whatever the completion order', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const n = 1 + (seed % 17);
      const offsets = Array.from({ length: n }, (_, i) => String(100 + i));
      const order = Array.from({ length: n }, (_, i) => i);
      let s = seed;
      for (let i = n - 1; i > 0; i--) {
        s = (s * 1103515245 + 12345) % 2 ** 31;
        const j = s % (i + 1);
        [order[i], order[j]] = [order[j], order[i]];
      }
      const { window, resolved } = setUp(offsets);
      const done = new Set<number>();
      for (const index of order) {
        done.add(index);
        window.complete(index);
        let prefix = 0;
        while (done.has(prefix)) prefix++;
        expect(window.resolved).toBe(prefix);
        if (prefix > 0) expect(resolved[resolved.length - 1]).toBe(offsets[prefix - 1]);
      }
      expect(resolved[resolved.length - 1]).toBe(offsets[n - 1]);
    }
  });
});
