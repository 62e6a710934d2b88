import { FeatureRow } from './feature-row';

/**
 * Where user and item features come from. Adapters: in-memory (embedded default, seeded from a
 * file) and Redis. An absent entity is `undefined`, never an error: the bundle's declared
 * defaults fill it in.
 */
export abstract class FeatureStore {
  abstract getUser(id: string): Promise<FeatureRow | undefined>;

  /** Rows in the order of `ids`; one call per request whatever the count. */
  abstract getItems(ids: readonly string[]): Promise<(FeatureRow | undefined)[]>;
}
