import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { KafkaConfig } from '@app/common';
import { createBatchScorer } from './batch-scorer-app';

async function bootstrap(): Promise<void> {
  const app = await createBatchScorer();
  await app.listen();
  Logger.log(
    `batch-scorer connected to Kafka at ${app.get(KafkaConfig).KAFKA_BROKERS}`,
    'Bootstrap',
  );
}

bootstrap().catch((error: Error) => {
  Logger.error(error.message, 'Bootstrap');
  process.exit(1);
});
