import { Global, Module } from '@nestjs/common';
import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * One prom-client Registry per application (not the global one), so two apps in one process,
 * as in the e2e specs, never collide on metric names. Libs inject `Registry` to register theirs.
 */
@Global()
@Module({
  providers: [
    {
      provide: Registry,
      useFactory: () => {
        const registry = new Registry();
        collectDefaultMetrics({ register: registry });
        return registry;
      },
    },
  ],
  exports: [Registry],
})
export class MetricsModule {}
