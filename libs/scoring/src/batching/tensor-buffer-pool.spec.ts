import { sizeClass, TensorBufferPool } from './tensor-buffer-pool';

describe('TensorBufferPool', () => {
  it('rounds sizes up to powers of two and 1.5 times them, at least 4 KiB', () => {
    expect(sizeClass(0)).toBe(4096);
    expect(sizeClass(4096)).toBe(4096);
    expect(sizeClass(4097)).toBe(6144);
    expect(sizeClass(6144)).toBe(6144);
    expect(sizeClass(6145)).toBe(8192);
    // A 1,000-row batch of the example CTR model: 26 int64 and 13 float32 columns.
    expect(sizeClass(1000 * 26 * 8)).toBe(262_144);
    expect(sizeClass(1000 * 13 * 4)).toBe(65_536);
    for (let n = 1; n < 5_000_000; n = Math.ceil(n * 1.37) + 1) {
      expect(sizeClass(n)).toBeGreaterThanOrEqual(n);
      expect(sizeClass(sizeClass(n))).toBe(sizeClass(n));
    }
  });

  it('hands a given buffer out again for a size of its class, and allocates otherwise', () => {
    const takes: string[] = [];
    const pool = new TensorBufferPool(1 << 20, (how) => takes.push(how));
    const first = pool.take(5000);
    expect(first.byteLength).toBe(6144);
    pool.give(first);
    expect(pool.heldBytes).toBe(6144);
    expect(pool.take(6000)).toBe(first);
    expect(pool.heldBytes).toBe(0);
    expect(pool.take(6000)).not.toBe(first);
    expect(pool.take(9000).byteLength).toBe(12_288);
    expect(takes).toEqual(['allocated', 'reused', 'allocated', 'allocated']);
  });

  it('keeps at most maxBytes, and nothing when maxBytes is 0', () => {
    const pool = new TensorBufferPool(10_000);
    const [a, b, c] = [pool.take(4096), pool.take(4096), pool.take(4096)];
    pool.give(a);
    pool.give(b);
    pool.give(c);
    expect(pool.heldBytes).toBe(8192);
    const again = [pool.take(4096), pool.take(4096), pool.take(4096)];
    expect(again[0]).toBe(b);
    expect(again[1]).toBe(a);
    expect(again[2]).not.toBe(c);
    const off = new TensorBufferPool(0);
    const d = off.take(100);
    off.give(d);
    expect(off.heldBytes).toBe(0);
    expect(off.take(100)).not.toBe(d);
  });

  it('drops a detached buffer, one of no class size, and one given twice', () => {
    const pool = new TensorBufferPool(1 << 20);
    const detached = pool.take(4096);
    structuredClone(detached, { transfer: [detached] });
    expect(detached.byteLength).toBe(0);
    pool.give(detached);
    pool.give(new ArrayBuffer(5000));
    expect(pool.heldBytes).toBe(0);
    const twice = pool.take(4096);
    pool.give(twice);
    pool.give(twice);
    expect(pool.heldBytes).toBe(4096);
    expect(pool.take(4096)).toBe(twice);
    // The second give was dropped: the next take is a new buffer, never `twice` again.
    expect(pool.take(4096)).not.toBe(twice);
  });
});
