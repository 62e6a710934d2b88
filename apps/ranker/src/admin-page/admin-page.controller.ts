import {
  Body,
  Controller,
  Get,
  Logger,
  NotFoundException,
  Post,
  Req,
  Res,
  UnsupportedMediaTypeException,
} from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AdminConfig } from '../admin/admin.config';
import { AdminPageMetrics } from './admin-page.metrics';
import { renderAdminPage } from './admin-page.render';
import { AdminPageSource } from './admin-page.source';
import { AdminSessions } from './admin-sessions';
import { renderLoginPage } from './login-page.render';
import { readCookie, SESSION_COOKIE, sessionCookie } from './session-cookie';

/** The routes that take the page's HTML forms (application/x-www-form-urlencoded). */
export const ADMIN_FORM_ROUTES = ['/admin/login', '/admin/logout'] as const;

/** No script at all, styles inline only, forms post back here only, never framed. */
const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/**
 * The status page for algorithm teams. The token is entered once in a form; the page then
 * trusts a session cookie (or an `Authorization: Bearer` header, for scripts). Without
 * RANKER_ADMIN_TOKEN none of these routes exists (404).
 */
@ApiExcludeController()
@Controller('admin')
export class AdminPageController {
  private readonly logger = new Logger('AdminPage');

  constructor(
    private readonly config: AdminConfig,
    private readonly sessions: AdminSessions,
    private readonly source: AdminPageSource,
    private readonly metrics: AdminPageMetrics,
  ) {}

  @Get()
  async page(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    this.requireEnabled(request);
    const bearer = /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? '')?.[1];
    if (bearer !== undefined) {
      if (!this.signIn(request, 'bearer', bearer)) {
        return send(reply, 403, renderLoginPage('Wrong token.'));
      }
    } else if (!this.sessions.verify(readCookie(request, SESSION_COOKIE))) {
      reply.header('www-authenticate', 'Bearer realm="ranker-admin"');
      return send(reply, 401, renderLoginPage());
    }
    send(reply, 200, renderAdminPage(await this.source.view()));
  }

  @Post('login')
  login(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Body() form: unknown): void {
    this.requireEnabled(request);
    const tokens = formOf(form).getAll('token');
    if (tokens.length !== 1 || tokens[0] === '') {
      this.metrics.signIns.inc({ via: 'form', outcome: 'missing_token' });
      return send(reply, 400, renderLoginPage('Enter the admin token.'));
    }
    if (!this.signIn(request, 'form', tokens[0])) {
      return send(reply, 403, renderLoginPage('Wrong token.'));
    }
    const cookie = sessionCookie(request, this.sessions.issue(), this.sessions.ttlSeconds);
    void reply.header('set-cookie', cookie).redirect('/admin', 303);
  }

  @Post('logout')
  logout(@Req() request: FastifyRequest, @Res() reply: FastifyReply): void {
    this.requireEnabled(request);
    void reply.header('set-cookie', sessionCookie(request, '', 0)).redirect('/admin', 303);
  }

  private signIn(request: FastifyRequest, via: 'form' | 'bearer', token: string): boolean {
    const ok = this.sessions.tokenMatches(token);
    this.metrics.signIns.inc({ via, outcome: ok ? 'ok' : 'wrong_token' });
    if (!ok) this.logger.warn(`wrong admin token (${via}) requestId=${request.id}`);
    else if (via === 'form') this.logger.log(`admin page sign-in requestId=${request.id}`);
    return ok;
  }

  /** Without a token nothing admin-related exists: the same 404 as any unknown route. */
  private requireEnabled(request: FastifyRequest): void {
    if (!this.config.enabled) {
      throw new NotFoundException(`Cannot ${request.method} ${request.url}`);
    }
  }
}

function send(reply: FastifyReply, status: number, page: string): void {
  void reply.status(status).headers(PAGE_HEADERS).send(page);
}

/** The parsed form; a body of another type is refused like on every other route. */
function formOf(body: unknown): URLSearchParams {
  if (body instanceof URLSearchParams) return body;
  if (body === undefined || body === null) return new URLSearchParams();
  const message = 'the body must be application/x-www-form-urlencoded (UTF-8)';
  throw new UnsupportedMediaTypeException({
    code: 'UNSUPPORTED_MEDIA_TYPE',
    message,
    details: [{ path: 'headers.content-type', message }],
  });
}
