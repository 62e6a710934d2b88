import { Logger } from '@nestjs/common';
import { KafkaConfig } from '../config/kafka.config';
import { ThrottledWarnings } from '../logging/throttled-warnings';
import { Kafka, logLevel } from 'kafkajs';

/** While the broker is down kafkajs repeats the same lines on every attempt; log each once a while. */
const REPEAT_AFTER_MS = 60_000;

/**
 * A kafkajs client whose own retries are short (a connect attempt fails within seconds when the
 * broker is down) because the callers retry for ever themselves and must stay stoppable. kafkajs
 * warnings and errors (mostly lost connections it recovers from) become throttled warnings.
 */
export function createKafkaClient(config: KafkaConfig, clientId: string): Kafka {
  const warnings = new ThrottledWarnings(new Logger('kafkajs'));
  const lastLogged = new Map<string, number>();
  return new Kafka({
    clientId,
    brokers: config.brokers,
    connectionTimeout: 3000,
    retry: { retries: 3, initialRetryTime: 300, maxRetryTime: 3000 },
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ namespace, log }) => {
        const { message, error } = log as { message: string; error?: unknown };
        const line = `[${namespace}] ${message}${error ? `: ${String(error)}` : ''}`;
        const now = Date.now();
        if (now - (lastLogged.get(line) ?? -Infinity) < REPEAT_AFTER_MS) return;
        if (lastLogged.size > 1000) lastLogged.clear();
        lastLogged.set(line, now);
        warnings.warn(line);
      },
  });
}
