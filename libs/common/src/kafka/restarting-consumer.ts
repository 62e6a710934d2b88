import { Logger } from '@nestjs/common';
import type { Consumer, ConsumerConfig, ConsumerRunConfig, Kafka } from 'kafkajs';
import { WakeableSleeps } from '../async/wakeable-sleeps';

export interface RestartingConsumerOptions {
  /** For log lines, e.g. `feature writer`. */
  name: string;
  topic: string;
  fromBeginning: boolean;
  consumer: ConsumerConfig;
  run: ConsumerRunConfig;
  /** Runs before each start attempt (e.g. creating topics, connecting a producer). */
  prepare?: () => Promise<void>;
  /** Called each time the consumer has (re)joined its group and fetched from its new position. */
  onPositioned?: () => void;
  /** Called each time the consumer has (re)joined its group, with the partitions it now owns. */
  onGroupJoin?: (assignment: Record<string, number[]>) => void;
  /** Appended to the line logged when a start attempt fails, e.g. what still works meanwhile. */
  whileDown?: string;
}

const RETRY_MS = [500, 1000, 2000, 5000];

/**
 * A kafkajs consumer that keeps trying to start until it runs, and starts again after a crash
 * kafkajs itself gives up on, so a broker that is down at boot or a fatal consumer error never
 * stops the service: it logs and retries. kafkajs restarts after retriable crashes on its own.
 */
export class RestartingConsumer {
  private readonly logger: Logger;
  private consumer?: Consumer;
  private starting?: Promise<void>;
  private stopped = false;
  private readonly sleeps = new WakeableSleeps();
  private awaitingFirstFetch = false;
  private positioned = false;

  constructor(
    private readonly kafka: Kafka,
    private readonly options: RestartingConsumerOptions,
  ) {
    this.logger = new Logger(`RestartingConsumer ${options.name}`);
  }

  /**
   * True once the consumer has joined its group and fetched once, i.e. knows the offsets it reads
   * from: anything produced from then on reaches it.
   */
  get consuming(): boolean {
    return this.positioned;
  }

  /** Stops fetching `topic` (all its partitions this member owns) until `resume`; no-op when down. */
  pause(topic: string): void {
    this.consumer?.pause([{ topic }]);
  }

  resume(topic: string): void {
    this.consumer?.resume([{ topic }]);
  }

  /** Starts consuming in the background (after `delayMs`); failures are logged and retried. */
  start(delayMs = 0): void {
    this.starting ??= this.startLoop(delayMs).finally(() => (this.starting = undefined));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.sleeps.wakeAll();
    await this.starting;
    this.positioned = false;
    await this.consumer?.disconnect().catch((error: Error) => {
      this.logger.warn(`disconnect failed: ${error.message}`);
    });
  }

  private async startLoop(delayMs: number): Promise<void> {
    if (delayMs > 0) await this.sleeps.sleep(delayMs);
    for (let attempt = 0; !this.stopped; attempt++) {
      const consumer = this.kafka.consumer(this.options.consumer);
      this.consumer = consumer;
      this.watch(consumer);
      try {
        await this.options.prepare?.();
        await consumer.connect();
        await consumer.subscribe({
          topics: [this.options.topic],
          fromBeginning: this.options.fromBeginning,
        });
        await consumer.run(this.options.run);
        this.logger.log(
          `consuming ${this.options.topic} in group ${this.options.consumer.groupId}`,
        );
        return;
      } catch (error) {
        await consumer.disconnect().catch(() => undefined);
        if (this.stopped) return;
        const delay = RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)];
        this.logger.warn(
          `cannot start (${(error as Error).message}); retrying in ${delay} ms` +
            (this.options.whileDown ? ` (${this.options.whileDown})` : ''),
        );
        await this.sleeps.sleep(delay);
      }
    }
  }

  private watch(consumer: Consumer): void {
    const { GROUP_JOIN, FETCH, CRASH, STOP } = consumer.events;
    consumer.on(GROUP_JOIN, ({ payload }) => {
      this.awaitingFirstFetch = true;
      this.options.onGroupJoin?.(payload.memberAssignment);
    });
    consumer.on(FETCH, () => {
      if (!this.awaitingFirstFetch) return;
      this.awaitingFirstFetch = false;
      this.positioned = true;
      this.options.onPositioned?.();
    });
    consumer.on(STOP, () => (this.positioned = false));
    consumer.on(CRASH, ({ payload }) => {
      this.positioned = false;
      if (payload.restart || this.stopped || consumer !== this.consumer) return;
      // kafkajs has disconnected this consumer and will not restart it: start a new one.
      this.logger.error(`crashed and kafkajs will not restart it (${payload.error.message})`);
      this.start(RETRY_MS[RETRY_MS.length - 1]);
    });
  }
}
