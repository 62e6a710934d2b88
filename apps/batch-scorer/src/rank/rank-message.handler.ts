import { Injectable, Logger } from '@nestjs/common';
import {
  deadLetterOf,
  errorBodyOf,
  MessageHandler,
  MessageJob,
  OutgoingRecord,
  RankerError,
  RankerErrorBody,
  RequestTooLargeError,
  SceneNotFoundError,
  ThrottledWarnings,
} from '@app/common';
import { PipelineConfig, RankResult, RankService } from '@app/pipeline';
import type { KafkaMessage } from 'kafkajs';
import { BatchScorerConfig } from '../batch-scorer.config';
import { BatchScorerMetrics } from '../batch-scorer.metrics';
import { parseRankMessage } from './rank-message';

/** Header of every result: the HTTP status the same call would have had (200, 400, 504, ...). */
export const RESULT_STATUS_HEADER = 'x-status';

/**
 * The Kafka edge of the rank path, as RankController is the HTTP one: one message is one rank
 * request, validated by the same function and ranked by the same RankService. Its outcome is the
 * records to produce: one result keyed by requestId (the REST answer, or the REST error body), and
 * for a message that is not a valid request, names an unknown scene, is larger than a model's
 * queue or failed for a reason other than its own deadline, the original message to the DLQ with
 * x-dlq-reason. A 503 (overloaded, a worker replaced, bundles loading) is thrown instead: the
 * message is ranked again, not refused.
 */
@Injectable()
export class RankMessageHandler {
  private readonly logger = new Logger(RankMessageHandler.name);
  private readonly warnings = new ThrottledWarnings(this.logger);

  constructor(
    private readonly ranker: RankService,
    private readonly pipeline: PipelineConfig,
    private readonly config: BatchScorerConfig,
    private readonly metrics: BatchScorerMetrics,
  ) {}

  readonly handle: MessageHandler = (message, topic, partition): MessageJob => {
    const where = { message, topic, partition };
    const parsed = parseRankMessage(
      message.value,
      message.headers,
      this.pipeline.RANK_MAX_CANDIDATES,
    );
    if (!parsed.ok) {
      const { kind, reason, error, requestId } = parsed;
      const records = this.refuse(where, kind, reason, error, requestId);
      return { rows: 0, run: () => Promise.resolve(records) };
    }
    const { requestId, scene, request } = parsed;
    return {
      rows: request.candidates.length,
      run: async () => {
        let result: RankResult;
        try {
          // Not sliced: the admission gate counts on the rows reaching the engine's queue within
          // the loop turn that admitted them (see RankOptions).
          result = await this.ranker.rank(scene, { ...request, requestId }, { sliced: false });
        } catch (error) {
          if (error instanceof RankerError && error.status === 503) throw error;
          return this.failed(where, requestId, error);
        }
        this.metrics.requests.inc({ outcome: 'ok' });
        this.metrics.rows.inc(request.candidates.length);
        return [this.result(requestId, 200, { requestId, ...result })];
      },
    };
  };

  /**
   * A record the broker refuses for good: a result is replaced by a small error result, so the
   * caller still hears; a dead letter cannot be replaced and is dropped. Both are logged.
   */
  readonly replaceRefused = (
    record: OutgoingRecord,
    type: string,
    error: Error,
  ): OutgoingRecord | undefined => {
    this.metrics.recordsRefused.inc({ topic: record.topic, reason: type });
    const key = record.message.key?.toString() ?? '-';
    this.logger.error(
      `${record.topic} key=${key}: the broker refuses this record for good (${type}: ${error.message})`,
    );
    const status = record.message.headers?.[RESULT_STATUS_HEADER]?.toString();
    if (record.topic !== this.config.BATCH_OUTPUT_TOPIC || status !== '200') return undefined;
    const message = `the result was refused by the broker (${type}); ask for fewer items (topK)`;
    return this.result(key, 500, {
      code: 'RESULT_UNDELIVERABLE',
      message,
      details: [{ path: 'topK', message }],
      requestId: key,
    });
  };

  private failed(where: Where, requestId: string, error: unknown): OutgoingRecord[] {
    const [status, body] = errorBodyOf(error);
    body.requestId = requestId;
    const records = [this.result(requestId, status, body)];
    const at = position(where);
    if (!(error instanceof RankerError))
      this.logger.error(`${at} requestId=${requestId}: ${(error as Error)?.stack ?? error}`);
    // The caller's own deadline: an answer, not a message to look at again.
    if (status === 504) {
      this.warnings.warn(`${at} requestId=${requestId}: ${status} ${body.code} ${body.message}`);
      this.metrics.requests.inc({ outcome: 'failed' });
      return records;
    }
    const [kind, reason] = deadLetterReason(error, body);
    return [...records, ...this.deadLetter(where, kind, reason, requestId)];
  }

  private refuse(
    where: Where,
    kind: string,
    reason: string,
    error: RankerError,
    requestId: string | undefined,
  ): OutgoingRecord[] {
    const dead = this.deadLetter(where, kind, reason, requestId);
    if (requestId === undefined) return dead;
    const [status, body] = errorBodyOf(error);
    body.requestId = requestId;
    return [this.result(requestId, status, body), ...dead];
  }

  private deadLetter(
    { message, topic, partition }: Where,
    kind: string,
    reason: string,
    requestId: string | undefined,
  ): OutgoingRecord[] {
    this.metrics.requests.inc({ outcome: 'dead_lettered' });
    this.metrics.deadLetters.inc({ reason: kind });
    this.warnings.warn(
      `${position({ message, topic, partition })} requestId=${requestId ?? '-'}: ${reason}; dead-lettering it`,
    );
    return [
      {
        topic: this.config.BATCH_DLQ_TOPIC,
        message: deadLetterOf(message, reason, topic, partition),
      },
    ];
  }

  private result(
    requestId: string,
    status: number,
    body: RankerErrorBody | (RankResult & { requestId: string }),
  ): OutgoingRecord {
    return {
      topic: this.config.BATCH_OUTPUT_TOPIC,
      message: {
        key: requestId,
        value: JSON.stringify(body),
        headers: { [RESULT_STATUS_HEADER]: String(status) },
      },
    };
  }
}

/** The DLQ metric's reason and the x-dlq-reason of a request the rank path refused for good. */
function deadLetterReason(error: unknown, body: RankerErrorBody): [string, string] {
  if (error instanceof SceneNotFoundError) return ['unknown_scene', error.message];
  // Larger than a model's queue (maxQueueRows): the same message would be refused every time.
  if (error instanceof RequestTooLargeError)
    return ['too_large', `request too large: ${error.message}`];
  return ['rank_failed', `rank failed: ${body.code}: ${body.message}`];
}

interface Where {
  message: KafkaMessage;
  topic: string;
  partition: number;
}

function position({ message, topic, partition }: Where): string {
  return `${topic}[${partition}]@${message.offset} key=${message.key?.toString('utf8') ?? '-'}`;
}
