/** The distinct values of one item key in a request, and each row's index among them. */
export interface DistinctKeys {
  distinct: string[];
  index: Int32Array;
}

/** Codes a listing table starts with room for; it doubles as codes come. */
const INITIAL_CODES = 1024;

/**
 * Lists a request's distinct item key strings by their codes (ItemArena.keyCode): per key slot, a
 * table of the request (serial) that last listed each code and the code's index in that request's
 * list, so listing a kept row's key is marking a number, not hashing a string. Rows computed for
 * the request alone bring their keys as strings, listed through a Map.
 */
export class KeyListing {
  private listedBy: Int32Array[] = [];
  private listedAt: Int32Array[] = [];
  private serial = 0;

  /** Empty tables for `slots` key slots: the arena started over, and codes with it. */
  reset(slots: number): void {
    this.listedBy = Array.from({ length: slots }, () => new Int32Array(INITIAL_CODES));
    this.listedAt = Array.from({ length: slots }, () => new Int32Array(INITIAL_CODES));
    this.serial = 0;
  }

  /** Room to list `code`, a code just handed out. */
  fit(code: number): void {
    if (code < this.listedBy[0].length) return;
    // Fresh tables: no code in them is marked as listed by a request still to come.
    const length = this.listedBy[0].length * 2;
    this.listedBy = this.listedBy.map(() => new Int32Array(length));
    this.listedAt = this.listedAt.map(() => new Int32Array(length));
  }

  /**
   * The serial of the next request's listing. Serials start over before they overflow: every mark
   * is cleared, so none is taken as current.
   */
  next(): number {
    if (this.serial === 0x7fffffff) {
      for (const listed of this.listedBy) listed.fill(0);
      this.serial = 0;
    }
    return ++this.serial;
  }

  /**
   * The distinct values of key `slot` in the request of `serial`, and each row's index among them:
   * a kept row's code (cell `at[r] + offset` of `codes`) is marked as listed by this request the
   * first time it is seen; a row of the request's own (`ownKeys[r]`) is listed by its string.
   */
  list(
    slot: number,
    serial: number,
    at: Int32Array,
    codes: Int32Array,
    offset: number,
    texts: readonly string[],
    ownKeys: string[][] | undefined,
  ): DistinctKeys {
    const n = at.length;
    const listedBy = this.listedBy[slot];
    const listedAt = this.listedAt[slot];
    const distinct: string[] = [];
    const index = new Int32Array(n);
    let ownSeen: Map<string, number> | undefined;
    for (let r = 0; r < n; r++) {
      const keys = ownKeys?.[r];
      if (keys === undefined) {
        const code = codes[at[r] + offset];
        if (listedBy[code] !== serial) {
          listedBy[code] = serial;
          listedAt[code] = distinct.push(texts[code]) - 1;
        }
        index[r] = listedAt[code];
        continue;
      }
      // A string a kept row also has is listed twice: both entries get the same value.
      ownSeen ??= new Map();
      let k = ownSeen.get(keys[slot]);
      if (k === undefined) ownSeen.set(keys[slot], (k = distinct.push(keys[slot]) - 1));
      index[r] = k;
    }
    return { distinct, index };
  }
}
