import { Logger } from '@nestjs/common';
import { deadLetterOf, FeatureUpdateFailedError, ThrottledWarnings } from '@app/common';
import type { EachBatchPayload, KafkaMessage, Message } from 'kafkajs';
import { FeaturesMetrics } from '../features.metrics';
import { RedisFeatureWriter, StoredRowRefusedError } from '../redis/redis-feature-writer';
import { DeadLetterSender, DeadLetterSink } from './dead-letter-sender';
import { BadField, FeatureUpdate, parseFeatureUpdate } from './feature-update';

export type { DeadLetterSink } from './dead-letter-sender';

/**
 * The writer side of real-time updates (one consumer group shared by every replica, so each
 * update is written to Redis once): valid updates are merged into the stored row unless it is as
 * new or newer; a message that is not an update, or whose Redis key can never take one (another
 * Redis type, a stored row that is not a JSON object), goes to the dead-letter topic with the
 * reason, so one bad key never holds up its partition. A batch is applied in chunks whose writes
 * run in parallel (auto-pipelined); a chunk's offsets are resolved only after all of its writes
 * and dead letters succeeded, so a transient failure (Redis down, a timeout, the broker down)
 * fails the batch and kafkajs fetches it again (replaying a merge is harmless: it is either
 * written again or stale). Each such retry is counted per partition: a stall shows in metrics.
 */
export class FeatureUpdateWriter {
  private readonly warnings = new ThrottledWarnings(new Logger(FeatureUpdateWriter.name));
  private readonly deadLetters: DeadLetterSender;

  constructor(
    private readonly store: RedisFeatureWriter,
    deadLetter: DeadLetterSink,
    private readonly metrics: FeaturesMetrics,
    private readonly chunkSize = 500,
  ) {
    this.deadLetters = new DeadLetterSender(deadLetter, metrics);
  }

  /** kafkajs `eachBatch` handler; run it with `eachBatchAutoResolve: false`. */
  readonly eachBatch = async (payload: EachBatchPayload): Promise<void> => {
    const { batch, resolveOffset, heartbeat, commitOffsetsIfNecessary } = payload;
    for (let start = 0; start < batch.messages.length; start += this.chunkSize) {
      // Stopping or rebalancing: leave the rest unresolved so it is fetched again.
      if (!payload.isRunning() || payload.isStale()) return;
      const chunk = batch.messages.slice(start, start + this.chunkSize);
      try {
        await this.apply(batch.topic, batch.partition, chunk);
      } catch (error) {
        this.metrics.updateRetries.inc({ topic: batch.topic, partition: String(batch.partition) });
        throw error;
      }
      resolveOffset(chunk[chunk.length - 1].offset);
      await commitOffsetsIfNecessary();
      await heartbeat();
    }
  };

  /** Applies messages of one partition; throws if a write or dead letter failed transiently. */
  async apply(topic: string, partition: number, messages: KafkaMessage[]): Promise<void> {
    const writes: Promise<void>[] = [];
    // Dead letters by position in the chunk, so they keep the order of the originals.
    const refused = new Array<Message | undefined>(messages.length);
    const refuse = (at: number, reason: string) => {
      const message = messages[at];
      refused[at] = deadLetterOf(message, reason, topic, partition);
      this.warnings.warn(
        `${topic}[${partition}]@${message.offset} key=${message.key?.toString('utf8') ?? '-'}: ` +
          `${reason}; dead-lettering it`,
      );
    };
    const now = Date.now();
    messages.forEach((message, at) => {
      const parsed = parseFeatureUpdate(message.value, message.timestamp);
      if (!parsed.ok) return refuse(at, parsed.reason);
      const { update, badFields } = parsed;
      if (badFields.length > 0) this.reportBadFields(update, badFields);
      this.metrics.updateLagMs.observe(Math.max(0, now - update.timestamp));
      if (Object.keys(update.fields).length === 0) {
        this.metrics.updates.inc({ result: 'empty' });
        return;
      }
      writes.push(
        this.write(update).catch((error: unknown) => {
          if (!(error instanceof StoredRowRefusedError)) throw error;
          this.metrics.updates.inc({ result: 'refused_by_store' });
          refuse(at, error.message);
        }),
      );
    });
    const failures = (await Promise.allSettled(writes)).filter(
      (r): r is PromiseRejectedResult => r.status === 'rejected',
    );
    // The whole chunk is retried: its dead letters are sent then, once.
    if (failures.length > 0)
      this.fail(topic, partition, messages, failures.length, failures[0].reason);
    const dead = refused.filter((m): m is Message => m !== undefined);
    if (dead.length === 0) return;
    try {
      await this.deadLetters.send(dead);
    } catch (error) {
      this.fail(topic, partition, messages, dead.length, error);
    }
  }

  private fail(
    topic: string,
    partition: number,
    messages: KafkaMessage[],
    count: number,
    cause: unknown,
  ): never {
    this.metrics.updates.inc({ result: 'failed' }, count);
    const why = cause instanceof Error ? cause.message : String(cause);
    throw new FeatureUpdateFailedError(
      `${topic}[${partition}] offsets ${messages[0].offset}-${messages[messages.length - 1].offset}: ` +
        `${why}; they will be retried`,
    );
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
