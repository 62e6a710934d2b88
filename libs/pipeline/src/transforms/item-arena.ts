import { FeatureRow } from '@app/features';

/** Where one item row's kept values are, whoever the user is. */
export interface KeptRow {
  /** The item's id: a row object is only reused for the id it was computed for. */
  id: string;
  /** Where its cells start in the arena: its column values, its item keys' codes after them. */
  at: number;
}

/**
 * Cells of item rows, 4 bytes each, seen as float32 and as int32: a slot feeding float32 inputs
 * holds its value as a float32, one feeding int64 inputs (or a key's code) as an int32, exactly as
 * the input's own typed array would hold it, so copying a cell into an input writes the value
 * the input would have got from the computed number.
 */
export interface ItemCells {
  floats: Float32Array;
  ints: Int32Array;
}

/** Rows an arena starts with room for; it doubles as items come. */
export const INITIAL_ARENA_ROWS = 1024;

/** Arenas made so far, in this process: each gets its own token. */
let arenasMade = 0;

export function cellsOf(buffer: ArrayBuffer): ItemCells {
  return { floats: new Float32Array(buffer), ints: new Int32Array(buffer) };
}

/**
 * The memory of an item side (ItemRowCache): the cells of kept rows, `width` a row, side by side
 * in one buffer; which row object is kept where; and the codes of item key strings. A row's slot
 * lives exactly as long as the row object: a WeakMap finds it, and a FinalizationRegistry gives
 * the slot back once the row is collected. Key codes are never given back one by one (a row's
 * death is not seen in time to know a code is unused): the owner starts the arena over instead
 * (`reset`), which gives it a new token, so a slot or a memo of an earlier arena is never taken
 * for one of this one.
 */
export class ItemArena {
  /** Grows by doubling (a copy: the old arrays stay valid for whoever read them). */
  private current = cellsOf(new ArrayBuffer(0));
  private rowWidth = -1;
  private arenaToken = 0;
  private kept = new WeakMap<FeatureRow, KeptRow>();
  /** Key string by code, and code by key string (for all key slots alike). */
  private keyTexts: string[] = [];
  private keyCodes = new Map<string, number>();
  private nextSlot = 0;
  private readonly freeSlots: number[] = [];
  private readonly released = new FinalizationRegistry<{ token: number; at: number }>(
    ({ token, at }) => {
      if (token === this.arenaToken) this.freeSlots.push(at);
    },
  );

  /** The cells as they are now: they hold every slot handed out so far. */
  get cells(): ItemCells {
    return this.current;
  }

  /** Cells per row; -1 before the first reset. */
  get width(): number {
    return this.rowWidth;
  }

  /** This arena among all of the process's (every item side's, every start-over). */
  get token(): number {
    return this.arenaToken;
  }

  /** Key strings by code. */
  get texts(): readonly string[] {
    return this.keyTexts;
  }

  /** Rows handed out a slot since the start (freed slots are handed out again first). */
  get rows(): number {
    return this.nextSlot;
  }

  /** Starts over, empty, with rows of `width` cells and a new token. */
  reset(width: number): void {
    this.arenaToken = ++arenasMade;
    this.rowWidth = width;
    this.kept = new WeakMap();
    this.keyTexts = [];
    this.keyCodes = new Map();
    this.current = cellsOf(new ArrayBuffer(4 * INITIAL_ARENA_ROWS * Math.max(1, width)));
    this.nextSlot = 0;
    this.freeSlots.length = 0;
  }

  find(row: FeatureRow): KeptRow | undefined {
    return this.kept.get(row);
  }

  /** A slot for `row` of `id`, kept until the row is collected; the caller fills its cells. */
  keep(row: FeatureRow, id: string): KeptRow {
    const kept: KeptRow = { id, at: this.slot() };
    this.kept.set(row, kept);
    this.released.register(row, { token: this.arenaToken, at: kept.at }, kept);
    return kept;
  }

  /** Undoes `keep` at once: the row is not kept, and its slot is free again. */
  forget(row: FeatureRow, kept: KeptRow): void {
    this.kept.delete(row);
    this.released.unregister(kept);
    this.freeSlots.push(kept.at);
  }

  /** The code of a key string, handing out the next one if it has none. */
  keyCode(text: string): number {
    let code = this.keyCodes.get(text);
    if (code === undefined) {
      code = this.keyTexts.push(text) - 1;
      this.keyCodes.set(text, code);
    }
    return code;
  }

  /** A free slot's first cell, growing the arena when none is free. */
  private slot(): number {
    const free = this.freeSlots.pop();
    if (free !== undefined) return free;
    const at = this.nextSlot * this.rowWidth;
    const cells = this.current.ints;
    if (at + this.rowWidth > cells.length) {
      const grown = cellsOf(
        new ArrayBuffer(4 * Math.max(INITIAL_ARENA_ROWS * this.rowWidth, cells.length * 2)),
      );
      grown.ints.set(cells);
      this.current = grown;
    }
    this.nextSlot++;
    return at;
  }
}
