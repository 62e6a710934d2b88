import { FeatureFrame } from '../transforms/feature-frame';

const DRY_RUN_ROWS = 8;

/**
 * A request with every feature at its declared default, for validating a bundle before traffic
 * (and, larger, for warming a new version before it serves).
 */
export function dryRunFrame(rows = DRY_RUN_ROWS): FeatureFrame {
  const itemIds = Array.from({ length: rows }, (_, i) => `dry-run-${i}`);
  return {
    userId: 'dry-run-user',
    userRequest: undefined,
    userStored: undefined,
    context: undefined,
    itemIds,
    itemRequest: itemIds.map(() => undefined),
    itemStored: itemIds.map(() => undefined),
  };
}
