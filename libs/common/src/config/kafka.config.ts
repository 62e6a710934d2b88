import { IsNotEmpty, Matches } from 'class-validator';

/** Kafka connection settings shared by every Kafka client of the service. */
export class KafkaConfig {
  /** Comma-separated host:port list. */
  @Matches(/^[^\s,:]+:\d+(,[^\s,:]+:\d+)*$/, {
    message: 'must be a comma-separated list of host:port',
  })
  KAFKA_BROKERS = '127.0.0.1:9092';

  @IsNotEmpty()
  KAFKA_CLIENT_ID = 'ranker';

  get brokers(): string[] {
    return this.KAFKA_BROKERS.split(',');
  }
}
