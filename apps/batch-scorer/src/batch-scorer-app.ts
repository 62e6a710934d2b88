import { INestMicroservice, LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { MicroserviceOptions, Transport } from '@nestjs/microservices';
import { KafkaConfig, loadEnvConfig } from '@app/common';
import { BatchScorerConfig } from './batch-scorer.config';
import { BatchScorerModule } from './batch-scorer.module';

/**
 * The Kafka worker: a Nest microservice on the Kafka transport. It connects, joins its consumer
 * group and loads the bundles; consuming rank requests is built on this in a later step.
 */
export async function createBatchScorer(logger?: false | LogLevel[]): Promise<INestMicroservice> {
  // Transport options are needed before the module exists, so they are read with the same loader.
  const kafka = loadEnvConfig(KafkaConfig);
  const { BATCH_SCORER_GROUP_ID } = loadEnvConfig(BatchScorerConfig);
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(BatchScorerModule, {
    transport: Transport.KAFKA,
    options: {
      client: { clientId: kafka.KAFKA_CLIENT_ID, brokers: kafka.brokers, retry: { retries: 5 } },
      consumer: { groupId: BATCH_SCORER_GROUP_ID },
      postfixId: '',
    },
    abortOnError: false,
    ...(logger === undefined ? {} : { logger }),
  });
  app.enableShutdownHooks();
  return app;
}
