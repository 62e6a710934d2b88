import { Injectable } from '@nestjs/common';
import { AdmissionGate } from '@app/common';
import { Counter, Gauge, Registry } from 'prom-client';

/** Metrics of the Kafka worker, served on its own /metrics port. */
@Injectable()
export class BatchScorerMetrics {
  readonly requests: Counter<'outcome'>;
  readonly rows: Counter<string>;
  readonly deadLetters: Counter<'reason'>;
  readonly retries: Counter<'code'>;
  readonly produceRetries: Counter<string>;
  readonly produceRequests: Counter<string>;
  readonly producedRecords: Counter<string>;
  readonly recordsRefused: Counter<'topic' | 'reason'>;
  readonly flowControl: Counter<'event'>;
  private readonly lag: Gauge<'topic' | 'partition'>;
  private gate?: AdmissionGate;
  /** Partitions with a lag series (of the one input topic). */
  private readonly lagged = new Set<string>();

  constructor(registry: Registry) {
    const registers = [registry];
    const gate = () => this.gate;
    this.requests = new Counter({
      name: 'ranker_batch_requests_total',
      help: 'Consumed rank requests by outcome: ok (result), failed (error result), dead_lettered',
      labelNames: ['outcome'],
      registers,
    });
    this.rows = new Counter({
      name: 'ranker_batch_rows_total',
      help: 'Candidates ranked into results',
      registers,
    });
    this.deadLetters = new Counter({
      name: 'ranker_batch_dead_letters_total',
      help: 'Messages sent to the DLQ, by reason',
      labelNames: ['reason'],
      registers,
    });
    this.retries = new Counter({
      name: 'ranker_batch_retries_total',
      help: 'Requests ranked again after a transient failure, by error code',
      labelNames: ['code'],
      registers,
    });
    this.produceRetries = new Counter({
      name: 'ranker_batch_produce_retries_total',
      help: 'Produce requests (results, dead letters) sent again after a failure',
      registers,
    });
    this.produceRequests = new Counter({
      name: 'ranker_batch_produce_requests_total',
      help: 'Produce requests sent (results and dead letters of many messages share one; retries counted)',
      registers,
    });
    this.producedRecords = new Counter({
      name: 'ranker_batch_produced_records_total',
      help: 'Records (results, dead letters) sent in produce requests; over ranker_batch_produce_requests_total, records per request',
      registers,
    });
    this.recordsRefused = new Counter({
      name: 'ranker_batch_records_refused_total',
      help: 'Results and dead letters the broker refused for good (results are replaced by an error result, dead letters dropped)',
      labelNames: ['topic', 'reason'],
      registers,
    });
    this.flowControl = new Counter({
      name: 'ranker_batch_flow_control_total',
      help: 'Input partitions paused (engine queue nearly full) and resumed (drained)',
      labelNames: ['event'],
      registers,
    });
    this.lag = new Gauge({
      name: 'ranker_batch_consumer_lag',
      help: 'Messages of a partition not yet handled, as of its last fetch',
      labelNames: ['topic', 'partition'],
      registers,
    });
    new Gauge({
      name: 'ranker_batch_in_flight_requests',
      help: 'Rank requests being ranked now',
      registers,
      collect() {
        this.set(gate()?.inFlightRequests ?? 0);
      },
    });
    new Gauge({
      name: 'ranker_batch_in_flight_rows',
      help: 'Candidates of the rank requests being ranked now',
      registers,
      collect() {
        this.set(gate()?.inFlightRows ?? 0);
      },
    });
    new Gauge({
      name: 'ranker_batch_paused',
      help: '1 while fetching is paused because the engine queue is nearly full',
      registers,
      collect() {
        this.set(gate()?.paused ? 1 : 0);
      },
    });
  }

  /** The gauges of in-flight work and pausing read this gate. */
  watch(gate: AdmissionGate): void {
    this.gate = gate;
  }

  setLag(topic: string, partition: number, lag: number): void {
    this.lag.set({ topic, partition: String(partition) }, lag);
    this.lagged.add(`${partition}`);
  }

  /** On a new assignment: partitions this worker no longer owns drop out of the lag gauge. */
  keepLagOf(topic: string, partitions: number[]): void {
    const owned = new Set(partitions.map(String));
    for (const partition of this.lagged) {
      if (owned.has(partition)) continue;
      this.lag.remove({ topic, partition });
      this.lagged.delete(partition);
    }
  }
}
