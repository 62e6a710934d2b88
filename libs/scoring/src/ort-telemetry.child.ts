/**
 * Child process of ort-telemetry.spec.ts: builds the worker engine with SCORING_ORT_TELEMETRY as
 * given on the command line, loads the example model (a session starts in a model thread), and
 * exits. The spec looks at what onnxruntime left behind.
 */
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { ScoringConfig } from './scoring.config';
import { WorkerScoringEngine } from './worker-scoring-engine';

async function main(): Promise<void> {
  Logger.overrideLogger(['error']);
  const engine = new WorkerScoringEngine(
    Object.assign(new ScoringConfig(), {
      SCORING_DEFAULT_INSTANCES: 1,
      SCORING_MAX_CONCURRENT_BATCHES: 1,
      SCORING_SPARE_THREADS: 0,
      SCORING_ORT_TELEMETRY: process.argv[2] === 'true',
    }),
  );
  await engine.load({
    id: 'ctr',
    file: join(__dirname, '../../../models/feed/v1/ctr.onnx'),
    instances: 1,
  });
  await engine.onApplicationShutdown();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
