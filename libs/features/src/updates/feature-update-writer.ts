import { Logger } from '@nestjs/common';
import { FeatureUpdateFailedError, ThrottledWarnings } from '@app/common';
import type { EachBatchPayload, KafkaMessage, Message } from 'kafkajs';
import { FeaturesMetrics } from '../features.metrics';
import { RedisFeatureWriter } from '../redis/redis-feature-writer';
import { deadLetterOf } from './dead-letter';
import { BadField, FeatureUpdate, parseFeatureUpdate } from './feature-update';

/** Sends refused messages to the dead-letter topic; resolves once the broker has them. */
export type DeadLetterSink = (messages: Message[]) => Promise<void>;

/**
 * The writer side of real-time updates (one consumer group shared by every replica, so each
 * update is written to Redis once): valid updates are merged into the stored row unless it is as
 * new or newer, refused messages go to the dead-letter topic with the reason. A batch is applied
 * in chunks whose writes run in parallel (auto-pipelined); a chunk's offsets are resolved only
 * after all of its writes succeeded, so a Redis or DLQ failure fails the batch and kafkajs fetches
 * it again (replaying a merge is harmless: it is either written again or stale).
 */
export class FeatureUpdateWriter {
  private readonly warnings = new ThrottledWarnings(new Logger(FeatureUpdateWriter.name));

  constructor(
    private readonly store: RedisFeatureWriter,
    private readonly deadLetter: DeadLetterSink,
    private readonly metrics: FeaturesMetrics,
    private readonly chunkSize = 500,
  ) {}

  /** kafkajs `eachBatch` handler; run it with `eachBatchAutoResolve: false`. */
  readonly eachBatch = async (payload: EachBatchPayload): Promise<void> => {
    const { batch, resolveOffset, heartbeat, commitOffsetsIfNecessary } = payload;
    for (let start = 0; start < batch.messages.length; start += this.chunkSize) {
      // Stopping or rebalancing: leave the rest unresolved so it is fetched again.
      if (!payload.isRunning() || payload.isStale()) return;
      const chunk = batch.messages.slice(start, start + this.chunkSize);
      await this.apply(batch.topic, batch.partition, chunk);
      resolveOffset(chunk[chunk.length - 1].offset);
      await commitOffsetsIfNecessary();
      await heartbeat();
    }
  };

  /** Applies messages of one partition; throws if any write or dead-lettering failed. */
  async apply(topic: string, partition: number, messages: KafkaMessage[]): Promise<void> {
    const pending: Promise<unknown>[] = [];
    const refused: Message[] = [];
    const now = Date.now();
    for (const message of messages) {
      const parsed = parseFeatureUpdate(message.value, message.timestamp);
      if (!parsed.ok) {
        refused.push(deadLetterOf(message, parsed.reason, topic, partition));
        this.warnings.warn(
          `${topic}[${partition}]@${message.offset} key=${message.key?.toString('utf8') ?? '-'}: ` +
            `${parsed.reason}; dead-lettering it`,
        );
        continue;
      }
      const { update, badFields } = parsed;
      if (badFields.length > 0) this.reportBadFields(update, badFields);
      this.metrics.updateLagMs.observe(Math.max(0, now - update.timestamp));
      if (Object.keys(update.fields).length === 0) this.metrics.updates.inc({ result: 'empty' });
      else pending.push(this.write(update));
    }
    if (refused.length > 0)
      pending.push(
        this.deadLetter(refused).then(() =>
          this.metrics.updates.inc({ result: 'dead_lettered' }, refused.length),
        ),
      );
    const failures = (await Promise.allSettled(pending)).filter(
      (r): r is PromiseRejectedResult => r.status === 'rejected',
    );
    if (failures.length > 0) {
      this.metrics.updates.inc({ result: 'failed' }, failures.length);
      const cause = failures[0].reason as Error;
      throw new FeatureUpdateFailedError(
        `${topic}[${partition}] offsets ${messages[0].offset}-${messages[messages.length - 1].offset}: ` +
          `${cause?.message ?? String(cause)}; they will be retried`,
      );
    }
  }

  private async write(update: FeatureUpdate): Promise<void> {
    const { entity, id, fields, timestamp } = update;
    const written = await this.store.mergeIfNewer(entity, id, fields, timestamp);
    this.metrics.updates.inc({ result: written ? 'written' : 'stale' });
  }

  private reportBadFields(update: FeatureUpdate, badFields: BadField[]): void {
    for (const { name, reason } of badFields) {
      this.metrics.badValues.inc({ source: 'update', reason });
      this.warnings.warn(
        `${update.entity}:${update.id} field ${name}: ` +
          (reason === 'reserved'
            ? 'reserved name; dropped'
            : 'not a string, finite number or boolean; dropped, the stored value is kept'),
      );
    }
  }
}
