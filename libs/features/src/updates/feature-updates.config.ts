import { IsBoolean, IsNotEmpty } from 'class-validator';

/** Settings of real-time feature updates (FeatureUpdatesModule), read only by apps that import it. */
export class FeatureUpdatesConfig {
  /** Consume feature updates from Kafka (Redis store only). */
  @IsBoolean()
  FEATURE_UPDATES_ENABLED = false;

  @IsNotEmpty()
  FEATURE_UPDATES_TOPIC = 'ranker.features.updates';

  @IsNotEmpty()
  FEATURE_UPDATES_DLQ_TOPIC = 'ranker.features.updates.dlq';

  /** Shared group: each update is written to Redis by one replica. */
  @IsNotEmpty()
  FEATURE_UPDATES_WRITER_GROUP = 'ranker-feature-writer';

  /** Prefix of each replica's own group: every replica refreshes its cache from every update. */
  @IsNotEmpty()
  FEATURE_UPDATES_CACHE_GROUP_PREFIX = 'ranker-feature-cache';
}
