import { Module } from '@nestjs/common';
import { KafkaConfig, typedConfigProvider } from '@app/common';
import { FeaturesModule } from '../features.module';
import { FeatureUpdatesConfig } from './feature-updates.config';
import { FeatureUpdatesLifecycle } from './feature-updates-lifecycle';

/**
 * Real-time feature updates from Kafka (writer and cache refresher). Only an app that wants them
 * imports this module, so the Kafka settings are read and validated only there; it shares the
 * Redis client, item cache and metrics of the one FeaturesModule instance.
 */
@Module({
  imports: [FeaturesModule],
  providers: [
    typedConfigProvider(FeatureUpdatesConfig),
    typedConfigProvider(KafkaConfig),
    FeatureUpdatesLifecycle,
  ],
})
export class FeatureUpdatesModule {}
