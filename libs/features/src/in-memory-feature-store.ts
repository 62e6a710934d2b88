import { FeatureRecord } from './feature-file';
import { FeatureRow } from './feature-row';
import { FeatureFetch, FeatureStore } from './feature-store.port';

/** The embedded default: features held in process, seeded from a file at boot. */
export class InMemoryFeatureStore extends FeatureStore {
  private readonly users = new Map<string, FeatureRow>();
  private readonly items = new Map<string, FeatureRow>();

  constructor(records: Iterable<FeatureRecord> = []) {
    super();
    for (const record of records) this.put(record);
  }

  put(record: FeatureRecord): void {
    (record.entity === 'user' ? this.users : this.items).set(record.id, record.fields);
  }

  get size(): { users: number; items: number } {
    return { users: this.users.size, items: this.items.size };
  }

  override heldItems(): Iterable<[string, FeatureRow]> {
    return this.items.entries();
  }

  async fetch(userId: string, itemIds: readonly string[]): Promise<FeatureFetch> {
    return {
      user: await this.getUser(userId),
      items: await this.getItems(itemIds),
      degraded: false,
      stats: { roundTrips: 0, cacheHits: 0, cacheMisses: 0 },
    };
  }

  async getUser(id: string): Promise<FeatureRow | undefined> {
    return this.users.get(id);
  }

  async getItems(ids: readonly string[]): Promise<(FeatureRow | undefined)[]> {
    const rows = new Array<FeatureRow | undefined>(ids.length);
    for (let i = 0; i < ids.length; i++) rows[i] = this.items.get(ids[i]);
    return rows;
  }
}
