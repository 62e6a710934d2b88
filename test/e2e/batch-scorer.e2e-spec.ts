import { INestMicroservice } from '@nestjs/common';
import { SceneRegistry } from '@app/pipeline';
import { Kafka, logLevel } from 'kafkajs';
import { createBatchScorer } from '../../apps/batch-scorer/src/batch-scorer-app';

/** The Kafka worker starts against the real broker, joins its consumer group and loads the bundles. */
describe('batch-scorer app (real Kafka broker)', () => {
  const groupId = `ranker-batch-scorer-e2e-${process.pid}-${Date.now()}`;
  let app: INestMicroservice;

  beforeAll(async () => {
    process.env.BATCH_SCORER_GROUP_ID = groupId;
    try {
      app = await createBatchScorer(['error']);
      await app.listen();
    } finally {
      delete process.env.BATCH_SCORER_GROUP_ID;
    }
  });
  afterAll(() => app?.close());

  it('joins its consumer group and serves the example scene', async () => {
    const admin = new Kafka({ brokers: ['127.0.0.1:9092'], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const { groups } = await admin.describeGroups([groupId]);
      expect(groups[0].state).toBe('Stable');
      expect(groups[0].members).toHaveLength(1);
    } finally {
      await admin.disconnect();
    }
    const registry = app.get(SceneRegistry);
    await registry.whenLoaded();
    expect(registry.status()).toEqual([{ scene: 'feed', version: 'v1' }]);
  });
});
