import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
});
