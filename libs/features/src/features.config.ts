import { IsIn, IsNotEmpty } from 'class-validator';

export class FeaturesConfig {
  /** Which FeatureStore adapter serves features. */
  @IsIn(['memory'])
  FEATURE_STORE = 'memory';

  /** JSON-lines file that seeds the in-memory store (relative paths are from the working directory). */
  @IsNotEmpty()
  FEATURES_SEED_FILE = 'models/demo/features.jsonl';
}
