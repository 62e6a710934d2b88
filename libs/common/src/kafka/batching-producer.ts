import type { Message, TopicMessages } from 'kafkajs';
import { exponentialBackoffMs, WakeableSleeps } from '../async/wakeable-sleeps';
import { sendSkippingUndeliverable } from './undeliverable';

/** One record to produce: its topic and message. */
export interface OutgoingRecord {
  topic: string;
  message: Message;
}

export interface BatchingProducerOptions {
  /** Sends records to the broker, resolving once it acknowledged them (acks = all). */
  send: (topicMessages: TopicMessages[]) => Promise<void>;
  /** Bytes of values and keys per produce request, at least one caller's records each. */
  maxBatchBytes: number;
  /**
   * How long records wait for more to join them when no request is in flight (ms, default 0):
   * fewer, larger produce requests cost the broker and the sockets less CPU.
   */
  lingerMs?: number;
  /** A record the broker refuses for good: return a replacement to send instead, or drop it. */
  refused: (record: OutgoingRecord, type: string, error: Error) => OutgoingRecord | undefined;
  /** A send failed for a reason that may pass (broker down, timeout); it is retried. */
  retrying?: (error: Error, attempt: number) => void;
  /** Delay before the n-th retry of a failed send (ms). */
  backoffMs?: (attempt: number) => number;
}

interface Pending {
  records: OutgoingRecord[];
  bytes: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

/** Raised for records still unsent when the producer closes; their offsets must stay uncommitted. */
export class ProducerClosedError extends Error {
  constructor() {
    super('the producer closed before these records were acknowledged');
  }
}

/**
 * Produces the outputs of many concurrently handled messages in few requests: each caller's
 * records wait while one request is in flight and leave together in the next (up to
 * `maxBatchBytes`, never splitting one caller's records), and each `send` resolves only once the
 * broker has acknowledged all of its records, so the caller may then commit the message they came
 * from. A failed request is retried with backoff until `close()`; a record the broker refuses for
 * good is replaced or dropped through `refused`, so it never blocks the records behind it.
 */
export class BatchingProducer {
  private queue: Pending[] = [];
  private sending = false;
  private lingering: NodeJS.Timeout | undefined;
  private queuedBytes = 0;
  private closed = false;
  private readonly sleeps = new WakeableSleeps();
  private readonly backoffMs: (attempt: number) => number;

  constructor(private readonly options: BatchingProducerOptions) {
    this.backoffMs = options.backoffMs ?? exponentialBackoffMs;
  }

  /** Resolves once the broker acknowledged every record (or took its replacement). */
  send(records: OutgoingRecord[]): Promise<void> {
    if (records.length === 0) return Promise.resolve();
    if (this.closed) return Promise.reject(new ProducerClosedError());
    return new Promise((resolve, reject) => {
      this.queue.push({ records, bytes: sizeOf(records), resolve, reject });
      this.queuedBytes += this.queue[this.queue.length - 1].bytes;
      if (this.sending) return; // the drain loop takes them next
      const linger = this.options.lingerMs ?? 0;
      if (linger > 0 && this.queuedBytes < this.options.maxBatchBytes) {
        this.lingering ??= setTimeout(() => void this.drain(), linger);
        return;
      }
      void this.drain();
    });
  }

  /** Stops retrying: records not acknowledged yet are rejected with ProducerClosedError. */
  close(): void {
    this.closed = true;
    clearTimeout(this.lingering);
    this.lingering = undefined;
    this.sleeps.wakeAll();
    const queued = this.queue;
    this.queue = [];
    this.queuedBytes = 0;
    for (const pending of queued) pending.reject(new ProducerClosedError());
  }

  private async drain(): Promise<void> {
    clearTimeout(this.lingering);
    this.lingering = undefined;
    this.sending = true;
    try {
      while (this.queue.length > 0 && !this.closed) {
        const group = this.takeGroup();
        if (await this.sendWithRetries(group)) for (const p of group) p.resolve();
        else for (const p of group) p.reject(new ProducerClosedError());
      }
    } finally {
      this.sending = false;
    }
  }

  private takeGroup(): Pending[] {
    let bytes = 0;
    let count = 0;
    while (count < this.queue.length) {
      const next = this.queue[count];
      if (count > 0 && bytes + next.bytes > this.options.maxBatchBytes) break;
      bytes += next.bytes;
      count++;
    }
    this.queuedBytes -= bytes;
    return this.queue.splice(0, count);
  }

  /** True once sent; false if the producer closed first. */
  private async sendWithRetries(group: Pending[]): Promise<boolean> {
    const records = group.flatMap((p) => p.records);
    for (let attempt = 0; !this.closed; attempt++) {
      try {
        await sendSkippingUndeliverable(
          (some) => this.options.send(byTopic(some)),
          records,
          this.options.refused,
        );
        return true;
      } catch (error) {
        if (this.closed) break;
        this.options.retrying?.(error as Error, attempt + 1);
        await this.sleeps.sleep(this.backoffMs(attempt));
      }
    }
    return false;
  }
}

function byTopic(records: OutgoingRecord[]): TopicMessages[] {
  const topics = new Map<string, Message[]>();
  for (const { topic, message } of records) {
    const messages = topics.get(topic);
    if (messages) messages.push(message);
    else topics.set(topic, [message]);
  }
  return [...topics].map(([topic, messages]) => ({ topic, messages }));
}

function sizeOf(records: OutgoingRecord[]): number {
  let bytes = 0;
  for (const { message } of records) bytes += length(message.value) + length(message.key);
  return bytes;
}

function length(data: Buffer | string | null | undefined): number {
  if (data === null || data === undefined) return 0;
  return typeof data === 'string' ? data.length : data.byteLength;
}
