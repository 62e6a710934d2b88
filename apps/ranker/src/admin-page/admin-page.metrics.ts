import { Injectable } from '@nestjs/common';
import { Counter, Registry } from 'prom-client';

export type SignInVia = 'form' | 'bearer';
export type SignInOutcome = 'ok' | 'wrong_token' | 'missing_token';

@Injectable()
export class AdminPageMetrics {
  readonly signIns: Counter<'via' | 'outcome'>;

  constructor(registry: Registry) {
    this.signIns = new Counter({
      name: 'ranker_admin_page_sign_ins_total',
      help: 'Sign-in attempts on the /admin page, by the token form or an Authorization: Bearer header',
      labelNames: ['via', 'outcome'],
      registers: [registry],
    });
  }
}
