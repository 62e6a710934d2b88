import { ConfigInvalidError, loadTypedConfig } from '@app/common';
import { FeaturesConfig } from './features.config';

const load = (env: Record<string, string>) => loadTypedConfig(FeaturesConfig, (name) => env[name]);

describe('FeaturesConfig', () => {
  it('bounds ids cached as absent by default, and takes 0 to cache none', () => {
    expect(load({}).ITEM_CACHE_MAX_NEGATIVE_ENTRIES).toBe(100_000);
    expect(load({ ITEM_CACHE_MAX_NEGATIVE_ENTRIES: '0' }).ITEM_CACHE_MAX_NEGATIVE_ENTRIES).toBe(0);
  });

  it.each(['-1', '1.5', 'lots'])('refuses ITEM_CACHE_MAX_NEGATIVE_ENTRIES=%s, naming it', (raw) => {
    expect(() => load({ ITEM_CACHE_MAX_NEGATIVE_ENTRIES: raw })).toThrow(ConfigInvalidError);
    expect(() => load({ ITEM_CACHE_MAX_NEGATIVE_ENTRIES: raw })).toThrow(
      /ITEM_CACHE_MAX_NEGATIVE_ENTRIES=/,
    );
  });

  it('no longer holds the Kafka update settings (FeatureUpdatesConfig does)', () => {
    expect(Object.keys(load({})).filter((key) => key.startsWith('FEATURE_UPDATES_'))).toEqual([]);
  });
});
