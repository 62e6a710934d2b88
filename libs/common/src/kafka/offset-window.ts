/**
 * The offsets of one fetched batch of one partition, resolved in order while its messages finish
 * out of order: an offset is handed to `resolve` only once its message and every message before it
 * are done, so a committed offset never passes a message whose outputs the broker has not
 * acknowledged (at-least-once). A message never completed holds back every later offset, which are
 * then fetched again.
 */
export class OffsetWindow {
  private readonly done: Uint8Array;
  private next = 0;

  constructor(
    private readonly offsets: readonly string[],
    private readonly resolve: (offset: string) => void,
  ) {
    this.done = new Uint8Array(offsets.length);
  }

  /** Messages resolved so far: a prefix of the batch. */
  get resolved(): number {
    return this.next;
  }

  /** Marks the message at `index` done; resolves the longest done prefix, if it grew. */
  complete(index: number): void {
    this.done[index] = 1;
    if (index !== this.next) return;
    while (this.next < this.offsets.length && this.done[this.next] === 1) this.next++;
    this.resolve(this.offsets[this.next - 1]);
  }
}
