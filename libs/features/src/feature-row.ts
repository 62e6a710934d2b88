/** A feature value as stored and as sent by callers; the bundle's transforms decide how it is used. */
export type FeatureValue = string | number | boolean;

/** One entity's features by name. */
export type FeatureRow = Readonly<Record<string, FeatureValue>>;

export type FeatureEntity = 'user' | 'item';

/**
 * What a store holds one item's row in (the item cache's entry, the in-memory store's record),
 * handed out by `fetch` beside the row. The `memo` fields are a consumer's: it may keep there what
 * it derives from `row` (a key of its own and a number) and find it again on the next fetch
 * without a lookup of its own. They are plain fields of the holder, not an object of their own,
 * so taking the memo reads the holder alone, which the fetch has just read. The store never reads
 * them (it creates them as `undefined`, 0 and 0); a holder whose row is replaced is a new holder,
 * or keeps its memo for a row it no longer holds, so a consumer checks `memoRow` against the row
 * it got.
 */
export interface ItemHolder {
  readonly row: FeatureRow | undefined;
  /** The row the memo was derived from. */
  memoRow: FeatureRow | undefined;
  /** The consumer's key: whose memo it is (0: none). An int32, as is `memoValue`. */
  memoKey: number;
  memoValue: number;
}

/**
 * The memos of the holders a fetch handed out, as the fetch found them (read while it read each
 * holder, so a consumer finds its memo in two arrays read in order rather than in thousands of
 * holders scattered over the heap): per row, the holder's `memoKey` and `memoValue` when its memo
 * is for the row handed out, else key 0.
 */
export interface ItemMemos {
  keys: Int32Array;
  values: Int32Array;
}

/** Memos of `length` rows, all key 0, for a fetch to fill with `copyMemo`. */
export function emptyItemMemos(length: number): ItemMemos {
  return { keys: new Int32Array(length), values: new Int32Array(length) };
}

/** Copies `holder`'s memo into row `i` of `memos` if it is for the row the holder hands out. */
export function copyMemo(memos: ItemMemos, i: number, holder: ItemHolder): void {
  if (holder.row !== undefined && holder.memoRow === holder.row) {
    memos.keys[i] = holder.memoKey;
    memos.values[i] = holder.memoValue;
  }
}

export function isFeatureValue(value: unknown): value is FeatureValue {
  return (
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value))
  );
}

/**
 * The envelope of a feature record, as the seed file and Kafka updates share it: why
 * `{ entity, id, fields }` is not one (the field values are each caller's business), or
 * undefined.
 */
export function featureRecordProblem(record: Record<string, unknown>): string | undefined {
  const entity = ownValue(record, 'entity');
  const id = ownValue(record, 'id');
  const fields = ownValue(record, 'fields');
  if (entity !== 'user' && entity !== 'item') return 'entity must be "user" or "item"';
  if (typeof id !== 'string' || id === '') return 'id must be a non-empty string';
  if (fields === null || typeof fields !== 'object' || Array.isArray(fields)) {
    return 'fields must be an object';
  }
  return undefined;
}

/** `object[name]` if it is the object's own property: nothing inherited from Object.prototype. */
export function ownValue(object: object, name: string): unknown {
  return Object.hasOwn(object, name) ? (object as Record<string, unknown>)[name] : undefined;
}
