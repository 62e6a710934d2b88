import { Injectable } from '@nestjs/common';
import { Counter, Registry } from 'prom-client';

const SCENE = ['scene', 'version'] as const;

/** Metrics of the rank path, per scene and bundle version. */
@Injectable()
export class PipelineMetrics {
  readonly badValues: Counter<(typeof SCENE)[number] | 'source' | 'reason'>;
  readonly nonFiniteScores: Counter<(typeof SCENE)[number]>;
  readonly tooLarge: Counter<(typeof SCENE)[number]>;
  readonly loopYields: Counter<'stage'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.badValues = new Counter({
      name: 'ranker_rank_bad_values_total',
      help: 'Feature values sent or stored that the bundle could not use (wrong type, or not finite in a column); the next layer (stored value, then default) was used',
      labelNames: [...SCENE, 'source', 'reason'],
      registers,
    });
    this.nonFiniteScores = new Counter({
      name: 'ranker_rank_nonfinite_scores_total',
      help: 'Candidates whose fused score was NaN or infinite (ranked last, marked nonFinite)',
      labelNames: SCENE,
      registers,
    });
    this.tooLarge = new Counter({
      name: 'ranker_rank_too_large_total',
      help: 'Requests refused with REQUEST_TOO_LARGE: more candidates than a model of the version queues (its maxQueueRows)',
      labelNames: SCENE,
      registers,
    });
    this.loopYields = new Counter({
      name: 'ranker_rank_loop_yields_total',
      help: 'Rank steps that waited for a later event-loop turn because the turn had already run RANK_LOOP_SLICE_MS of rank work, by the step (start, fetched, scored)',
      labelNames: ['stage'],
      registers,
    });
  }
}
