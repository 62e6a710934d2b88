import {
  FeatureFrame,
  featureFrame,
  NO_ITEM_FEATURES,
  rowArray,
} from '../transforms/feature-frame';
import { Scene } from './scene';

const DRY_RUN_ROWS = 8;

/**
 * A request with every feature at its declared default, for validating a bundle before traffic
 * (and, larger, for warming a new version before it serves). No larger than the scene takes in
 * one request (its smallest `maxQueueRows`), so a small queue never fails its own checks.
 */
export function dryRunFrame(scene: Pick<Scene, 'models'>, rows = DRY_RUN_ROWS): FeatureFrame {
  const n = Math.min(rows, maxCandidatesOf(scene));
  return featureFrame({
    userId: 'dry-run-user',
    userRequest: undefined,
    userStored: undefined,
    context: undefined,
    itemIds: rowArray(n, (i) => `dry-run-${i}`),
    itemRequest: NO_ITEM_FEATURES,
    itemStored: rowArray(n, () => undefined),
  });
}

/** The most candidates one request may have on `scene`: its smallest model queue. */
export function maxCandidatesOf(scene: Pick<Scene, 'models'>): number {
  let max = Infinity;
  for (const model of scene.models) max = Math.min(max, model.maxRows);
  return max;
}
