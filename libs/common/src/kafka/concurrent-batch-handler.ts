import { Logger } from '@nestjs/common';
import type { EachBatchPayload, KafkaMessage } from 'kafkajs';
import { exponentialBackoffMs, WakeableSleeps } from '../async/wakeable-sleeps';
import { ThrottledWarnings } from '../logging/throttled-warnings';
import { AdmissionGate } from './admission-gate';
import { BatchingProducer, OutgoingRecord, ProducerClosedError } from './batching-producer';
import { OffsetWindow } from './offset-window';

/** What handling one consumed message takes: its weight, and the work itself. */
export interface MessageJob {
  /** Rows (work units) the gate counts while it runs. */
  rows: number;
  /**
   * Does the work and returns the records to produce for it (results, dead letters). Throwing
   * means "not now": the job is run again after a backoff, never skipped.
   */
  run(): Promise<OutgoingRecord[]>;
}

export type MessageHandler = (
  message: KafkaMessage,
  topic: string,
  partition: number,
) => MessageJob;

export interface ConcurrentBatchEvents {
  /** Messages left behind `partition`'s last resolved offset, as of its last fetch. */
  lag(topic: string, partition: number, lag: number): void;
  /** A job threw and will be run again. */
  retried(error: unknown): void;
}

export interface ConcurrentBatchOptions {
  handler: MessageHandler;
  gate: AdmissionGate;
  producer: BatchingProducer;
  events: ConcurrentBatchEvents;
  /** Delay before the n-th run again of a job that threw (ms). */
  backoffMs?: (attempt: number) => number;
  /** How often a batch still running heartbeats to its group (ms). */
  heartbeatMs?: number;
}

/**
 * A kafkajs `eachBatch` (run it with `eachBatchAutoResolve: false`) that handles the messages of a
 * partition concurrently, as the gate admits them, and commits at-least-once: a message's offset
 * is resolved (and so committed) only after the broker acknowledged every record its job produced
 * and every earlier message of the partition is resolved too. Messages not started when the
 * consumer stops stay unresolved and are fetched again, by this member or the next owner of the
 * partition. While a batch runs it heartbeats, so a slow batch never costs the group membership.
 */
export class ConcurrentBatchHandler {
  private readonly logger = new Logger(ConcurrentBatchHandler.name);
  private readonly warnings = new ThrottledWarnings(this.logger);
  private readonly backoffMs: (attempt: number) => number;
  private stopping = false;
  private readonly sleeps = new WakeableSleeps();

  constructor(private readonly options: ConcurrentBatchOptions) {
    this.backoffMs = options.backoffMs ?? exponentialBackoffMs;
  }

  /** Starts no more messages and gives up retries; messages already running finish. */
  stop(): void {
    this.stopping = true;
    this.options.gate.close();
    this.sleeps.wakeAll();
  }

  readonly eachBatch = async (payload: EachBatchPayload): Promise<void> => {
    const { batch } = payload;
    const { topic, partition, messages } = batch;
    const highWatermark = Number(batch.highWatermark);
    const lag = (next: number) =>
      this.options.events.lag(topic, partition, Math.max(0, highWatermark - next));
    lag(Number(messages[0].offset));
    const window = new OffsetWindow(
      messages.map((m) => m.offset),
      (offset) => {
        payload.resolveOffset(offset);
        lag(Number(offset) + 1);
      },
    );
    let rebalancing = false;
    const heartbeat = setInterval(() => {
      payload.heartbeat().catch(() => (rebalancing = true));
    }, this.options.heartbeatMs ?? 1000);
    const running: Promise<void>[] = [];
    try {
      for (let index = 0; index < messages.length; index++) {
        const job = this.options.handler(messages[index], topic, partition);
        const admitted = await this.options.gate.acquire(job.rows);
        if (!admitted) break;
        if (this.stopping || rebalancing || !payload.isRunning() || payload.isStale()) {
          this.options.gate.release(job.rows);
          break;
        }
        running.push(this.runJob(job, () => window.complete(index), messages[index], batch));
      }
      // kafkajs commits the resolved offsets once this returns. A job that failed against its
      // contract leaves its offset unresolved, after every other job of the batch has finished.
      const failed = (await Promise.allSettled(running)).find((r) => r.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
    } finally {
      clearInterval(heartbeat);
    }
  };

  private async runJob(
    job: MessageJob,
    done: () => void,
    message: KafkaMessage,
    where: { topic: string; partition: number },
  ): Promise<void> {
    let records: OutgoingRecord[] | undefined;
    try {
      records = await this.runWithRetries(job, message, where);
    } finally {
      this.options.gate.release(job.rows);
    }
    if (records === undefined) return;
    try {
      await this.options.producer.send(records);
      done();
    } catch (error) {
      // Left unresolved: this offset and the ones after it are fetched again.
      if (!(error instanceof ProducerClosedError)) throw error;
    }
  }

  /** The job's records, or undefined when stopping before it succeeded. */
  private async runWithRetries(
    job: MessageJob,
    message: KafkaMessage,
    { topic, partition }: { topic: string; partition: number },
  ): Promise<OutgoingRecord[] | undefined> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await job.run();
      } catch (error) {
        if (this.stopping) return undefined;
        this.options.events.retried(error);
        this.warnings.warn(
          `${topic}[${partition}]@${message.offset}: ${(error as Error).message}; ` +
            `retrying (attempt ${attempt + 2})`,
        );
        await this.sleeps.sleep(this.backoffMs(attempt));
        if (this.stopping) return undefined;
      }
    }
  }
}
