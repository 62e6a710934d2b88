import type { FeatureRow } from '../feature-row';
import type { IndexedRow, ItemIdIndex } from './item-id-index';

/**
 * A store's holder of one row (see ItemHolder) for an ItemIdIndex: its memo is written as plain
 * fields would be, and each write is mirrored into the row's record, which hands the memo out on a
 * hit without a read of this object.
 */
export class IndexedHolder implements IndexedRow {
  tick = 0;
  rec = -1;
  entry = -1;
  private heldMemoRow: FeatureRow | undefined = undefined;
  private heldMemoKey = 0;
  private heldMemoValue = 0;

  constructor(
    readonly id: string,
    readonly row: FeatureRow | undefined,
    readonly expiresAt: number,
    private readonly index: ItemIdIndex,
  ) {}

  get memoRow(): FeatureRow | undefined {
    return this.heldMemoRow;
  }

  set memoRow(row: FeatureRow | undefined) {
    this.heldMemoRow = row;
    this.index.noteMemo(this);
  }

  get memoKey(): number {
    return this.heldMemoKey;
  }

  set memoKey(key: number) {
    this.heldMemoKey = key;
    this.index.noteMemo(this);
  }

  get memoValue(): number {
    return this.heldMemoValue;
  }

  set memoValue(value: number) {
    this.heldMemoValue = value;
    this.index.noteMemo(this);
  }
}
