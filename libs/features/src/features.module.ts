import { Logger, Module } from '@nestjs/common';
import { typedConfigProvider } from '@app/common';
import { resolve } from 'node:path';
import { readFeatureFile } from './feature-file';
import { FeatureStore } from './feature-store.port';
import { FeaturesConfig } from './features.config';
import { InMemoryFeatureStore } from './in-memory-feature-store';

@Module({
  providers: [
    typedConfigProvider(FeaturesConfig),
    {
      provide: FeatureStore,
      inject: [FeaturesConfig],
      useFactory: async (config: FeaturesConfig): Promise<FeatureStore> => {
        const file = resolve(config.FEATURES_SEED_FILE);
        const store = new InMemoryFeatureStore(await readFeatureFile(file));
        const { users, items } = store.size;
        new Logger('FeaturesModule').log(
          `in-memory feature store: ${users} users, ${items} items from ${file}`,
        );
        return store;
      },
    },
  ],
  exports: [FeatureStore],
})
export class FeaturesModule {}
