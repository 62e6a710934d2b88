import { INestApplicationContext, LoggerService, LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { restoreFastStringPrototype } from '@app/common';
import { BatchScorerModule } from './batch-scorer.module';

/**
 * The Kafka worker (used by main.ts and by the e2e specs, so both run the same wiring): an
 * application context with no HTTP app of its own; its edge is RankRequestConsumer, and its
 * /metrics and health answer on BATCH_METRICS_PORT. Resolves once booted: bundles load and the
 * consumer joins its group in the background (/health/ready tells when).
 */
export async function createBatchScorer(
  logger?: false | LogLevel[] | LoggerService,
): Promise<INestApplicationContext> {
  // Every module is loaded by now (ioredis among them, whose String subclass slowed every string
  // method down): before any code is optimized, and again once the app is built.
  restoreFastStringPrototype();
  const app = await NestFactory.createApplicationContext(BatchScorerModule, {
    abortOnError: false,
    ...(logger === undefined ? {} : { logger }),
  });
  restoreFastStringPrototype();
  app.enableShutdownHooks();
  return app;
}
