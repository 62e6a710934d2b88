import type { IHeaders, KafkaMessage, Message } from 'kafkajs';
import { receivedHeaders } from './message-headers';

/** Headers a dead-lettered update carries besides its original ones. */
export const DEAD_LETTER_HEADERS = {
  reason: 'x-dlq-reason',
  topic: 'x-original-topic',
  partition: 'x-original-partition',
  offset: 'x-original-offset',
} as const;

/**
 * The DLQ record of a refused message: its original key, value and headers plus why and where.
 * A null header value is left out (kafkajs cannot write one; see receivedHeaders).
 */
export function deadLetterOf(
  message: KafkaMessage,
  reason: string,
  topic: string,
  partition: number,
): Message {
  const headers: IHeaders = {
    ...receivedHeaders(message.headers),
    [DEAD_LETTER_HEADERS.reason]: reason,
    [DEAD_LETTER_HEADERS.topic]: topic,
    [DEAD_LETTER_HEADERS.partition]: String(partition),
    [DEAD_LETTER_HEADERS.offset]: message.offset,
  };
  return { key: message.key, value: message.value, headers };
}
