import type { Kafka } from 'kafkajs';

/**
 * Creates the topics that do not exist yet (broker defaults for partitions and replication);
 * one created meanwhile by another replica counts as done.
 */
export async function ensureTopics(kafka: Kafka, topics: string[]): Promise<string[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((topic) => !existing.has(topic));
    if (missing.length > 0)
      await admin.createTopics({
        topics: missing.map((topic) => ({ topic })),
        waitForLeaders: true,
      });
    return missing;
  } finally {
    await admin.disconnect();
  }
}
