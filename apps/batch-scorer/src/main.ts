import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { tuneGarbageCollector } from '@app/common';
import { createBatchScorer } from './batch-scorer-app';
import { BatchScorerConfig } from './batch-scorer.config';

async function bootstrap(): Promise<void> {
  // Before the serving path runs: V8's choices for its allocation sites start from these flags.
  tuneGarbageCollector();
  const app = await createBatchScorer();
  const config = app.get(BatchScorerConfig);
  Logger.log(
    `batch-scorer: ${config.BATCH_INPUT_TOPIC} -> ${config.BATCH_OUTPUT_TOPIC} ` +
      `(DLQ ${config.BATCH_DLQ_TOPIC}) in group ${config.BATCH_SCORER_GROUP_ID}`,
    'Bootstrap',
  );
}

bootstrap().catch((error: Error) => {
  Logger.error(error.message, 'Bootstrap');
  process.exit(1);
});
