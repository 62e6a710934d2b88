import { NestFactory } from '@nestjs/core';
import type { LoggerService, LogLevel } from '@nestjs/common';
import { loadEnvConfig, restoreFastStringPrototype } from '@app/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import { Registry } from 'prom-client';
import { serveOpenApi } from './docs/openapi';
import { DrainingFastifyAdapter } from './http/draining-fastify-adapter';
import { sendClientError } from './http/client-errors';
import { sendFrameworkError } from './http/framework-errors';
import { HttpExceptionFilter } from './http/http-exception.filter';
import { HttpMetrics, recordHttpRequests } from './http/http-metrics';
import { ADMIN_FORM_ROUTES } from './admin-page/admin-page.controller';
import { acceptFormsFor } from './http/form-body';
import { acceptJsonOnly } from './http/json-body';
import { AdminConfig } from './admin/admin.config';
import { AdminTokenGuard } from './admin/admin-token.guard';
import { checkAdminTokenFirst } from './admin/admin-token-first';
import { RankerConfig } from './ranker.config';
import { RankerModule } from './ranker.module';

/** Builds the HTTP app (used by main.ts and by the e2e specs, so both run the same wiring). */
export async function createRankerApp(
  logger?: false | LogLevel[] | LoggerService,
): Promise<NestFastifyApplication> {
  // Every module is loaded by now (ioredis among them, whose String subclass slowed every string
  // method down): before any code is optimized, and again once the app is built.
  restoreFastStringPrototype();
  // The adapter and the module's shape exist before the module, so these settings are read here
  // with the same loader.
  const { BODY_LIMIT_BYTES, HTTP_CLOSE_GRACE_MS } = loadEnvConfig(RankerConfig);
  const admin = loadEnvConfig(AdminConfig);
  const adapter = new DrainingFastifyAdapter(
    {
      bodyLimit: BODY_LIMIT_BYTES,
      requestIdHeader: 'x-request-id',
      genReqId: () => randomUUID(),
      frameworkErrors: sendFrameworkError,
      clientErrorHandler: sendClientError,
    },
    HTTP_CLOSE_GRACE_MS,
  );
  adapter.getInstance().addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // Every answered request counted and timed, once the app's registry exists (below).
  let httpMetrics: HttpMetrics | undefined = undefined;
  recordHttpRequests(adapter.getInstance(), () => httpMetrics);
  // JSON is the only body the API takes: Nest's own parsers (one of them for form bodies) stay
  // off, and Fastify's JSON parser is the only one left. The /admin page's HTML forms are the
  // one exception, on their own routes.
  acceptJsonOnly(adapter.getInstance());
  if (admin.enabled) acceptFormsFor(adapter.getInstance(), ADMIN_FORM_ROUTES);
  // The admin token is checked before the body is read (the guard is there once the app is).
  let adminGuard: AdminTokenGuard | undefined;
  if (admin.enabled) checkAdminTokenFirst(adapter.getInstance(), () => adminGuard);
  const app = await NestFactory.create<NestFastifyApplication>(
    RankerModule.forRoot({ adminEnabled: admin.enabled }),
    adapter,
    {
      abortOnError: false,
      bodyParser: false,
      ...(logger === undefined ? {} : { logger }),
    },
  );
  restoreFastStringPrototype();
  httpMetrics = new HttpMetrics(app.get(Registry));
  if (admin.enabled) adminGuard = app.get(AdminTokenGuard);
  app.useGlobalFilters(new HttpExceptionFilter());
  serveOpenApi(app);
  app.enableShutdownHooks();
  return app;
}
