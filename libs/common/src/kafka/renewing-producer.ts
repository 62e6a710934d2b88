import { Logger } from '@nestjs/common';
import type { Producer, TopicMessages } from 'kafkajs';

/**
 * An idempotent kafkajs producer that is replaced after any failed send. kafkajs numbers the
 * records of each partition for the broker's duplicate check, and when a produce request fails it
 * takes back the numbers of every partition of the request, also of those the broker accepted
 * (one record refused for good among others suffices). Every later send to those partitions then
 * fails with OUT_OF_ORDER_SEQUENCE_NUMBER for ever. A fresh producer gets a new producer id and
 * numbers from 0, so the caller's retry goes through. Failures are rare; a replacement costs one
 * InitProducerId request.
 */
export class RenewingProducer {
  private readonly logger = new Logger(RenewingProducer.name);
  private current?: Promise<Producer>;

  constructor(private readonly create: () => Producer) {}

  /** Connects the producer sends will use (sends connect it themselves too). */
  async connect(): Promise<void> {
    await this.producer();
  }

  async sendBatch(topicMessages: TopicMessages[]): Promise<void> {
    const producing = this.producer();
    const producer = await producing;
    try {
      await producer.sendBatch({ topicMessages, acks: -1 });
    } catch (error) {
      this.renew(producing);
      throw error;
    }
  }

  async disconnect(): Promise<void> {
    const current = this.current;
    this.current = undefined;
    await (await current?.catch(() => undefined))?.disconnect();
  }

  private producer(): Promise<Producer> {
    this.current ??= (async () => {
      const producer = this.create();
      try {
        await producer.connect();
        return producer;
      } catch (error) {
        this.current = undefined;
        throw error;
      }
    })();
    return this.current;
  }

  /** The next send starts a new producer; this one disconnects in the background. */
  private renew(failed: Promise<Producer>): void {
    if (this.current !== failed) return;
    this.current = undefined;
    void failed
      .then((producer) => producer.disconnect())
      .catch((error: Error) =>
        this.logger.warn(`disconnecting a failed producer: ${error.message}`),
      );
  }
}
