import { Injectable } from '@nestjs/common';
import { Counter, Registry } from 'prom-client';

@Injectable()
export class AdminMetrics {
  readonly authFailures: Counter<'reason'>;

  constructor(registry: Registry) {
    this.authFailures = new Counter({
      name: 'ranker_admin_auth_failures_total',
      help: 'Admin API calls refused, by reason: missing (no bearer token, 401), invalid (wrong token, 403)',
      labelNames: ['reason'],
      registers: [registry],
    });
  }
}
