import { Logger } from '@nestjs/common';
import type { Message } from 'kafkajs';
import { FeaturesMetrics } from '../features.metrics';

/** Sends refused messages to the dead-letter topic; resolves once the broker has them. */
export type DeadLetterSink = (messages: Message[]) => Promise<void>;

/**
 * Broker answers (kafkajs protocol error types) that no retry can change for this record: the
 * dead letter itself is refused, e.g. larger than the DLQ topic's `max.message.bytes`.
 */
const UNDELIVERABLE = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE', 'INVALID_RECORD']);

/**
 * Dead-letters a chunk's refused updates in one send. When the broker refuses a dead letter for
 * good, retrying the chunk would stall its partition for ever, so each is then sent alone and the
 * ones that still cannot be delivered are logged (key, original position, why) and counted in
 * `ranker_features_dead_letters_dropped_total`: the partition moves on. Any other failure (broker
 * down, timeouts, authorization) is thrown, and the chunk is retried.
 */
export class DeadLetterSender {
  private readonly logger = new Logger('FeatureUpdateDeadLetters');

  constructor(
    private readonly sink: DeadLetterSink,
    private readonly metrics: FeaturesMetrics,
  ) {}

  async send(messages: Message[]): Promise<void> {
    try {
      await this.sink(messages);
      this.metrics.updates.inc({ result: 'dead_lettered' }, messages.length);
      return;
    } catch (error) {
      if (undeliverable(error) === undefined) throw error;
    }
    // Some dead letter cannot be delivered: find which, one at a time (rare, so sequential).
    for (const message of messages) {
      try {
        await this.sink([message]);
        this.metrics.updates.inc({ result: 'dead_lettered' });
      } catch (error) {
        const type = undeliverable(error);
        if (type === undefined) throw error;
        this.drop(message, type, error as Error);
      }
    }
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

/** The kafkajs protocol error type if `error` (or what it wraps) is a refusal for good. */
function undeliverable(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0) {
    const current = queue.shift();
    if (current === null || typeof current !== 'object' || seen.has(current)) continue;
    seen.add(current);
    const { type, cause, originalError, errors } = current as {
      type?: unknown;
      cause?: unknown;
      originalError?: unknown;
      errors?: unknown;
    };
    if (typeof type === 'string' && UNDELIVERABLE.has(type)) return type;
    queue.push(cause, originalError, ...(Array.isArray(errors) ? errors : []));
  }
  return undefined;
}
