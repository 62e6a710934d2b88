import { IndexedHolder } from './cache/indexed-holder';
import { ItemIdIndex } from './cache/item-id-index';
import { FeatureRecord } from './feature-file';
import { copyMemo, emptyItemMemos, FeatureRow, ItemHolder } from './feature-row';
import { FeatureFetch, FeatureStore } from './feature-store.port';

/** The embedded default: features held in process, seeded from a file at boot. */
export class InMemoryFeatureStore extends FeatureStore {
  private readonly users = new Map<string, FeatureRow>();
  /** Each item's row in a holder of its own (a new one when the row is replaced): see ItemHolder. */
  private readonly items = new Map<string, IndexedHolder>();
  /** The same holders in typed arrays, for a fetch's lookups (see ItemIdIndex). */
  private readonly index = new ItemIdIndex();

  constructor(records: Iterable<FeatureRecord> = []) {
    super();
    for (const record of records) this.put(record);
  }

  put(record: FeatureRecord): void {
    if (record.entity === 'user') {
      this.users.set(record.id, record.fields);
      return;
    }
    const old = this.items.get(record.id);
    if (old !== undefined) this.index.remove(old);
    const holder = new IndexedHolder(record.id, record.fields, Infinity, this.index);
    this.items.set(record.id, holder);
    this.index.add(holder);
  }

  get size(): { users: number; items: number } {
    return { users: this.users.size, items: this.items.size };
  }

  override *heldItems(): Iterable<[string, FeatureRow]> {
    for (const [id, { row }] of this.items) yield [id, row!];
  }

  async fetch(userId: string, itemIds: readonly string[]): Promise<FeatureFetch> {
    const itemHolders = new Array<ItemHolder | undefined>(itemIds.length);
    const items = new Array<FeatureRow | undefined>(itemIds.length);
    const itemMemos = emptyItemMemos(itemIds.length);
    const { index } = this;
    const found = index.findAll(itemIds);
    for (let i = 0; i < itemIds.length; i++) {
      // The record holds the memo: the holder is handed out, not read (ids the index cannot hold
      // are looked up in the map).
      const rec = found[i];
      if (rec >= 0) {
        index.handOut(rec, i, items, itemHolders, itemMemos);
        continue;
      }
      const holder = this.items.get(itemIds[i]);
      itemHolders[i] = holder;
      items[i] = holder?.row;
      if (holder !== undefined) copyMemo(itemMemos, i, holder);
    }
    return {
      user: await this.getUser(userId),
      items,
      itemHolders,
      itemMemos,
      degraded: false,
      stats: { roundTrips: 0, cacheHits: 0, cacheMisses: 0 },
    };
  }

  async getUser(id: string): Promise<FeatureRow | undefined> {
    return this.users.get(id);
  }

  async getItems(ids: readonly string[]): Promise<(FeatureRow | undefined)[]> {
    const rows = new Array<FeatureRow | undefined>(ids.length);
    for (let i = 0; i < ids.length; i++) rows[i] = this.items.get(ids[i])?.row;
    return rows;
  }
}
