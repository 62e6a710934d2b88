import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { tuneGarbageCollector } from '@app/common';
import { createRankerApp } from './ranker-app';
import { RankerConfig } from './ranker.config';

async function bootstrap(): Promise<void> {
  // Before the serving path runs: V8's choices for its allocation sites start from these flags.
  tuneGarbageCollector();
  const app = await createRankerApp();
  const config = app.get(RankerConfig);
  await app.listen(config.PORT, config.HOST);
  Logger.log(`ranker listening on http://${config.HOST}:${config.PORT}`, 'Bootstrap');
}

bootstrap().catch((error: Error) => {
  Logger.error(error.message, 'Bootstrap');
  process.exit(1);
});
