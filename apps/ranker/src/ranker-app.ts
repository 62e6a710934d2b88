import { NestFactory } from '@nestjs/core';
import type { LogLevel } from '@nestjs/common';
import { loadEnvConfig } from '@app/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import { DrainingFastifyAdapter } from './http/draining-fastify-adapter';
import { HttpExceptionFilter } from './http/http-exception.filter';
import { RankerConfig } from './ranker.config';
import { RankerModule } from './ranker.module';

/** Builds the HTTP app (used by main.ts and by the e2e specs, so both run the same wiring). */
export async function createRankerApp(
  logger?: false | LogLevel[],
): Promise<NestFastifyApplication> {
  // The adapter exists before the module, so its one setting is read here with the same loader.
  const { BODY_LIMIT_BYTES } = loadEnvConfig(RankerConfig);
  const adapter = new DrainingFastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
  });
  adapter.getInstance().addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if (adapter.draining) reply.header('connection', 'close');
  });
  const app = await NestFactory.create<NestFastifyApplication>(RankerModule, adapter, {
    abortOnError: false,
    ...(logger === undefined ? {} : { logger }),
  });
  // JSON is the only body the API takes; other types get 415 instead of being parsed as text.
  app.getHttpAdapter().getInstance().removeContentTypeParser(['text/plain']);
  app.useGlobalFilters(new HttpExceptionFilter());
  app.enableShutdownHooks();
  return app;
}
