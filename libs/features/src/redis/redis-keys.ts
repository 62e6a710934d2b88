import { FeatureEntity } from '../feature-row';

/** One string key per entity: `<prefix>user:<id>` and `<prefix>item:<id>` (default prefix `rk:`). */
export class RedisKeys {
  constructor(private readonly prefix: string) {}

  key(entity: FeatureEntity, id: string): string {
    return `${this.prefix}${entity}:${id}`;
  }
}
