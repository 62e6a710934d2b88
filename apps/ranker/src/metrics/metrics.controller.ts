import { Controller, Get, Header } from '@nestjs/common';
import { Registry } from 'prom-client';

/** Prometheus scrape endpoint for every metric the libs register. */
@Controller('metrics')
export class MetricsController {
  constructor(private readonly registry: Registry) {}

  @Get()
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  metrics(): Promise<string> {
    return this.registry.metrics();
  }
}
