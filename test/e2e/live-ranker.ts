import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeVersion } from '../support/bundle-versions';
import { RankerClient } from './ranker-client';

/** A temp BUNDLES_DIR holding `feed/v1` (the example bundle, complete); `remove()` deletes it. */
export async function bundlesRoot(
  prefix: string,
): Promise<{ root: string; remove(): Promise<void> }> {
  const root = await mkdtemp(join(tmpdir(), prefix));
  await writeVersion(root, 'feed', 'v1');
  return { root, remove: () => rm(root, { recursive: true, force: true }) };
}

/**
 * The ranker app on a bundlesRoot of its own, polled every 200 ms, one instance per model (light
 * enough for specs that load versions beside it); `env` adds or overrides settings.
 */
export async function startLiveRanker(
  prefix: string,
  env: Record<string, string> = {},
): Promise<{ root: string; ranker: RankerClient; close(): Promise<void> }> {
  const bundles = await bundlesRoot(prefix);
  const ranker = await RankerClient.start({
    BUNDLES_DIR: bundles.root,
    BUNDLES_POLL_INTERVAL_MS: '200',
    SCORING_DEFAULT_INSTANCES: '1',
    ...env,
  });
  return {
    root: bundles.root,
    ranker,
    close: async () => {
      await ranker.close();
      await bundles.remove();
    },
  };
}
