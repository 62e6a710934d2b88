import type { IHeaders, KafkaMessage, Message } from 'kafkajs';

/** Headers a dead-lettered update carries besides its original ones. */
export const DEAD_LETTER_HEADERS = {
  reason: 'x-dlq-reason',
  topic: 'x-original-topic',
  partition: 'x-original-partition',
  offset: 'x-original-offset',
} as const;

/** The DLQ record of a refused message: its original key, value and headers plus why and where. */
export function deadLetterOf(
  message: KafkaMessage,
  reason: string,
  topic: string,
  partition: number,
): Message {
  const headers: IHeaders = {
    ...message.headers,
    [DEAD_LETTER_HEADERS.reason]: reason,
    [DEAD_LETTER_HEADERS.topic]: topic,
    [DEAD_LETTER_HEADERS.partition]: String(partition),
    [DEAD_LETTER_HEADERS.offset]: message.offset,
  };
  return { key: message.key, value: message.value, headers };
}
