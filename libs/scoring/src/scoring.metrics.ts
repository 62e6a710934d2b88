import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

const LABELS = ['model', 'version'] as const;
const MS_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256, 1000];

/** Metrics of the scoring engine, per model and bundle version. */
@Injectable()
export class ScoringMetrics {
  readonly queueMs: Histogram<(typeof LABELS)[number]>;
  readonly computeMs: Histogram<(typeof LABELS)[number]>;
  readonly batchRows: Histogram<(typeof LABELS)[number]>;
  readonly rowsScored: Counter<(typeof LABELS)[number]>;
  readonly rejections: Counter<(typeof LABELS)[number] | 'reason'>;
  readonly nonFinite: Counter<(typeof LABELS)[number] | 'output'>;
  readonly workerRestarts: Counter<(typeof LABELS)[number]>;
  readonly bufferTakes: Counter<'result'>;
  readonly threadTakes: Counter<'source'>;
  readonly spareThreads: Gauge;

  constructor(registry: Registry) {
    const registers = [registry];
    this.queueMs = new Histogram({
      name: 'ranker_scoring_queue_ms',
      help: 'Time a request waited in the dynamic batcher before its first rows were dispatched',
      labelNames: LABELS,
      buckets: MS_BUCKETS,
      registers,
    });
    this.computeMs = new Histogram({
      name: 'ranker_scoring_compute_ms',
      help: 'onnxruntime run() time of one batch in its worker',
      labelNames: LABELS,
      buckets: MS_BUCKETS,
      registers,
    });
    this.batchRows = new Histogram({
      name: 'ranker_scoring_batch_rows',
      help: 'Rows per batch sent to a model instance',
      labelNames: LABELS,
      buckets: [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096],
      registers,
    });
    this.rowsScored = new Counter({
      name: 'ranker_scoring_rows_total',
      help: 'Rows scored',
      labelNames: LABELS,
      registers,
    });
    this.rejections = new Counter({
      name: 'ranker_scoring_rejections_total',
      help: 'Requests refused or failed by the engine, by reason (overloaded, queue_wait, too_large, deadline, worker_crashed, run_failed)',
      labelNames: [...LABELS, 'reason'],
      registers,
    });
    this.nonFinite = new Counter({
      name: 'ranker_scoring_nonfinite_outputs_total',
      help: 'Model output values that were NaN or infinite',
      labelNames: [...LABELS, 'output'],
      registers,
    });
    this.workerRestarts = new Counter({
      name: 'ranker_scoring_worker_restarts_total',
      help: 'Model workers replaced after they died',
      labelNames: LABELS,
      registers,
    });
    this.bufferTakes = new Counter({
      name: 'ranker_scoring_batch_buffers_total',
      help: 'Batch input buffers by origin: reused (back from a worker) or allocated',
      labelNames: ['result'],
      registers,
    });
    this.threadTakes = new Counter({
      name: 'ranker_scoring_thread_starts_total',
      help: 'Model instances started, by where their thread came from: spare (already started) or new',
      labelNames: ['source'],
      registers,
    });
    this.spareThreads = new Gauge({
      name: 'ranker_scoring_spare_threads',
      help: 'Model threads started and idle, waiting for a model (SCORING_SPARE_THREADS at most)',
      registers,
    });
  }
}
