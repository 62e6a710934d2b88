import { mkdtempSync, rmSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { writeVersion } from '../support/bundle-versions';
import { bundlesRoot } from './live-ranker';
import { RankerClient } from './ranker-client';

describe('health endpoints', () => {
  it('live and ready answer 200 once the example bundle is loaded', async () => {
    const ranker = await RankerClient.start();
    try {
      expect((await ranker.request('GET', '/health/live')).status).toBe(200);
      const ready = await ranker.request('GET', '/health/ready');
      expect(ready.status).toBe(200);
      expect(ready.body.details.scenes.scenes).toEqual([{ scene: 'feed', version: 'v1' }]);
    } finally {
      await ranker.close();
    }
  });

  it('ready is 503 while no scene can serve, live stays 200', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'ranker-no-bundles-'));
    const ranker = await RankerClient.start({ BUNDLES_DIR: empty });
    try {
      expect((await ranker.request('GET', '/health/live')).status).toBe(200);
      const ready = await ranker.request('GET', '/health/ready');
      expect(ready.status).toBe(503);
      const rank = await ranker.rank('feed', { user: { id: 'u1' }, candidates: [{ id: 'i1' }] });
      expect(rank.status).toBe(404);
    } finally {
      await ranker.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('ready waits for traffic.yaml: from the first 200 on, the stable it pins serves, not the newest version', async () => {
    const { root, remove } = await bundlesRoot('ranker-pinned-boot-');
    // v2 scores otherwise (its golden file, v1's scores, no longer applies) and is the newest.
    await writeVersion(root, 'feed', 'v2', {
      edit: (yaml, dir) => {
        yaml.fusion = 'pow(ctr.ctr, 0.5) * pow(mtl.ctr, 0.5) * (1 + mtl.cvr)';
        return rm(join(dir, 'golden.jsonl'));
      },
    });
    await writeFile(join(root, 'feed', 'traffic.yaml'), 'stable: v1\n');
    const ranker = await RankerClient.start({
      BUNDLES_DIR: root,
      BUNDLES_POLL_INTERVAL_MS: '0',
      SCORING_DEFAULT_INSTANCES: '1',
    });
    try {
      let ready = await ranker.request('GET', '/health/ready');
      for (const until = Date.now() + 30_000; ready.status !== 200 && Date.now() < until;) {
        await sleep(20);
        ready = await ranker.request('GET', '/health/ready');
      }
      expect(ready.status).toBe(200);
      const first = await ranker.rank('feed', { user: { id: 'u1' }, candidates: [{ id: 'i1' }] });
      expect(first.status).toBe(200);
      expect(first.body.version).toBe('v1');
      expect(ready.body.details.scenes.scenes).toEqual([{ scene: 'feed', version: 'v1' }]);
    } finally {
      await ranker.close();
      await remove();
    }
  });
});
