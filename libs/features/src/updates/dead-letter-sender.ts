import { Logger } from '@nestjs/common';
import { sendSkippingUndeliverable } from '@app/common';
import type { Message } from 'kafkajs';
import { FeaturesMetrics } from '../features.metrics';

/** Sends refused messages to the dead-letter topic; resolves once the broker has them. */
export type DeadLetterSink = (messages: Message[]) => Promise<void>;

/**
 * Dead-letters a chunk's refused updates in one send. When the broker refuses a dead letter for
 * good (e.g. larger than the DLQ topic's `max.message.bytes`), retrying the chunk would stall its
 * partition for ever, so the ones that cannot be delivered are logged (key, original position,
 * why) and counted in `ranker_features_dead_letters_dropped_total`: the partition moves on. Any
 * other failure (broker down, timeouts, authorization) is thrown, and the chunk is retried.
 */
export class DeadLetterSender {
  private readonly logger = new Logger('FeatureUpdateDeadLetters');

  constructor(
    private readonly sink: DeadLetterSink,
    private readonly metrics: FeaturesMetrics,
  ) {}

  async send(messages: Message[]): Promise<void> {
    const sent = await sendSkippingUndeliverable(this.sink, messages, (message, type, error) => {
      this.drop(message, type, error);
      return undefined;
    });
    this.metrics.updates.inc({ result: 'dead_lettered' }, sent);
  }

  private drop(message: Message, type: string, error: Error): void {
    this.metrics.deadLettersDropped.inc({ reason: type });
    const header = (name: string) => String(message.headers?.[name] ?? '-');
    this.logger.error(
      `${header('x-original-topic')}[${header('x-original-partition')}]@${header('x-original-offset')} ` +
        `key=${message.key?.toString() ?? '-'}: the broker refuses its dead letter for good ` +
        `(${type}: ${error.message}); dropped. Its reason was: ${header('x-dlq-reason')}`,
    );
  }
}
