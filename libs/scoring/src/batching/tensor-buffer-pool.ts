/** Smallest buffer handed out: below it, allocation costs less than keeping buffers. */
const MIN_CLASS_BYTES = 4096;

/** How the pool answered `take`, for its metric. */
export type BufferTake = 'reused' | 'allocated';

/**
 * Input buffers of batches, used again instead of allocated per batch. A 3,000-candidate request
 * of the example scene moves ~1.5 MB of tensors through its batches; allocating that afresh for
 * every batch costs page faults and zeroing on the event-loop thread, and each buffer that
 * reaches a model worker grows that thread's external memory until V8 runs a full collection of
 * its heap (a model worker did one every ~120 batches). Workers transfer the input buffers back
 * with their results, and the batcher gives them here for the next batch.
 *
 * Sizes are rounded up to classes (powers of two and 1.5 times them), so batches of similar rows
 * share buffers; a buffer is longer than its batch and the batch's `dims` say how much of it is
 * the tensor. The pool keeps at most `maxBytes` (0 turns it off); beyond that a returned buffer
 * is left to the garbage collector. It only ever holds what was in flight at once, so it settles
 * at the working set of the busiest moment.
 */
export class TensorBufferPool {
  private readonly free = new Map<number, ArrayBuffer[]>();
  /** What `free` holds: a buffer given twice must not be handed out twice. */
  private readonly kept = new WeakSet<ArrayBuffer>();
  private held = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly onTake: (how: BufferTake) => void = () => undefined,
  ) {}

  /** Bytes kept for reuse. */
  get heldBytes(): number {
    return this.held;
  }

  /** A buffer of at least `byteLength` bytes, of unspecified content. */
  take(byteLength: number): ArrayBuffer {
    const size = sizeClass(byteLength);
    const buffer = this.free.get(size)?.pop();
    if (buffer !== undefined) {
      this.kept.delete(buffer);
      this.held -= size;
      this.onTake('reused');
      return buffer;
    }
    this.onTake('allocated');
    return new ArrayBuffer(size);
  }

  /**
   * Keeps `buffer` for a later `take`. The caller gives up every view of it. A detached buffer
   * (byteLength 0), one of a size no class has (not from `take`), one past the cap, or one already
   * kept is dropped.
   */
  give(buffer: ArrayBuffer): void {
    const size = buffer.byteLength;
    if (size === 0 || size !== sizeClass(size) || this.held + size > this.maxBytes) return;
    if (this.kept.has(buffer)) return;
    this.kept.add(buffer);
    let list = this.free.get(size);
    if (list === undefined) this.free.set(size, (list = []));
    list.push(buffer);
    this.held += size;
  }
}

/** The class of a size: the smallest power of two, or 1.5 times one, that holds it. */
export function sizeClass(byteLength: number): number {
  if (byteLength <= MIN_CLASS_BYTES) return MIN_CLASS_BYTES;
  const power = 2 ** Math.ceil(Math.log2(byteLength));
  return byteLength <= power * 0.75 ? power * 0.75 : power;
}
