/**
 * The /admin status page as a person meets it: the real ranker app (example bundle) with an admin
 * token, opened in the distribution's headless Chromium (test/services/chromium.sh installs it),
 * driven by playwright-core. Then the same routes over plain HTTP for what a browser hides:
 * statuses, cookie attributes, the 404 without a token, and the 415 every other route keeps.
 */
import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Browser, BrowserContext, chromium, Page } from 'playwright-core';
import { createRankerApp } from '../../apps/ranker/src/ranker-app';
import { writeVersion } from '../support/bundle-versions';
import { bundlesRoot } from './live-ranker';
import { RankerClient } from './ranker-client';

const TOKEN = `e2e-admin-token-${Math.random().toString(36).slice(2)}`;
const CHROMIUM = '/usr/bin/chromium';
/** The machines' closed network refuses Chromium's background connections; keep it quiet. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The rows of the table named `name`, each cell's text trimmed. */
async function tableRows(page: Page, name: string): Promise<string[][]> {
  const rows = page.getByRole('table', { name }).getByRole('row');
  const cells: string[][] = [];
  for (const row of await rows.all())
    cells.push((await row.getByRole('cell').allInnerTexts()).map((t) => t.trim()));
  return cells.filter((r) => r.length > 0);
}

describe('/admin in a headless Chromium', () => {
  let ranker: RankerClient;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    ranker = await RankerClient.start({ RANKER_ADMIN_TOKEN: TOKEN });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    context = await browser.newContext();
    page = await context.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await ranker?.close();
  });

  const tokenInput = () => page.getByLabel('Admin token');

  it('shows the token form to a visitor who has not signed in', async () => {
    const response = await page.goto(`${ranker.baseUrl}/admin`);
    expect(response?.status()).toBe(401);
    expect(await page.title()).toBe('Ranker status: sign in');
    await expect(tokenInput().isVisible()).resolves.toBe(true);
    expect(await tokenInput().getAttribute('type')).toBe('password');
    expect(await page.getByRole('button', { name: 'Sign in' }).isVisible()).toBe(true);
    expect(await page.getByRole('alert').count()).toBe(0);
  });

  it('refuses a wrong token with a message, and sets no cookie', async () => {
    await tokenInput().fill(`${TOKEN}-wrong`);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/admin/login')),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    expect(response.status()).toBe(403);
    expect((await page.getByRole('alert').innerText()).trim()).toBe('Wrong token.');
    expect(await tokenInput().isVisible()).toBe(true);
    expect(await context.cookies()).toEqual([]);
  });

  it('signs in with the right token and shows the scenes with their serving versions', async () => {
    await tokenInput().fill(TOKEN);
    await Promise.all([
      page.waitForURL(`${ranker.baseUrl}/admin`),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    await page.getByRole('heading', { name: 'Scenes' }).waitFor();
    expect(await page.title()).toBe('Ranker status');
    expect(await tableRows(page, 'Scenes')).toEqual([['feed', 'v1', 'serving', 'stable']]);
    expect(await tableRows(page, 'Versions')).toEqual([
      ['v1', 'serving', 'pass', 'pass', 'pass', 'pass'],
    ]);
    const feed = page.getByRole('region', { name: 'Scene feed' });
    const text = await feed.innerText();
    expect(text).toContain('No canary.');
    expect(text).toContain('No experiments.');
    expect(text).toContain('No shadow version.');
    expect(await tokenInput().count()).toBe(0);

    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/admin' });
    expect(cookie.value).not.toContain(TOKEN);
  });

  it('stays signed in when the page is reloaded: the token is entered once', async () => {
    const response = await page.reload();
    expect(response?.status()).toBe(200);
    expect(await tableRows(page, 'Scenes')).toEqual([['feed', 'v1', 'serving', 'stable']]);
    const again = await context.newPage();
    expect((await again.goto(`${ranker.baseUrl}/admin`))?.status()).toBe(200);
    await again.close();
  });

  it('logs out back to the token form, and a reload does not sign in again', async () => {
    await Promise.all([
      page.waitForURL(`${ranker.baseUrl}/admin`),
      page.getByRole('button', { name: 'Log out' }).click(),
    ]);
    expect(await tokenInput().isVisible()).toBe(true);
    expect(await context.cookies()).toEqual([]);
    expect((await page.reload())?.status()).toBe(401);
    expect(await tokenInput().isVisible()).toBe(true);
  });
});

describe('/admin during a rollout, in a headless Chromium', () => {
  const prefix = `ranker-admin-page-spec-${randomUUID()}:`;
  const auth = { authorization: `Bearer ${TOKEN}` };
  let ranker: RankerClient;
  let removeRoot: () => Promise<void>;
  let browser: Browser;
  let page: Page;

  const rollout = async () =>
    (await ranker.request('GET', '/v1/admin/scenes/feed', undefined, 'application/json', auth))
      .body;
  const until = async (what: string, check: () => Promise<boolean>, withinMs = 30_000) => {
    for (const end = Date.now() + withinMs; !(await check()); await sleep(50))
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
  };

  beforeAll(async () => {
    let root: string;
    ({ root, remove: removeRoot } = await bundlesRoot('ranker-admin-page-'));
    // v2 and v3 are copies of v1: a canary and a shadow (a shadow may not also take traffic).
    await writeVersion(root, 'feed', 'v2');
    await writeVersion(root, 'feed', 'v3');
    await writeFile(
      join(root, 'feed', 'traffic.yaml'),
      'stable: v1\ncanary:\n  version: v2\n  percent: 40\nshadow:\n  version: v3\n  percent: 100\n',
    );
    ranker = await RankerClient.start({
      RANKER_ADMIN_TOKEN: TOKEN,
      BUNDLES_DIR: root,
      TRAFFIC_REDIS_KEY_PREFIX: prefix,
      SCORING_DEFAULT_INSTANCES: '1',
    });
    await until('v2 and v3 ready', async () => {
      const listing = await rollout();
      return ['v2', 'v3'].every((v) =>
        listing.versions.some(
          (row: { version: string; state: string }) => row.version === v && row.state === 'ready',
        ),
      );
    });
    // Requests from 40 users: both arms of the canary get some, the shadow scores each.
    for (let u = 0; u < 40; u++) {
      const reply = await ranker.request('POST', '/v1/scenes/feed/rank', {
        user: { id: `u${u}` },
        context: { hour: 3, device: 'ios' },
        candidates: Array.from({ length: 5 }, (_, i) => ({ id: `i${i * 17 + 1}` })),
      });
      expect(reply.status).toBe(200);
    }
    await until('shadow comparisons', async () =>
      (await rollout()).rollout.shadows.some((s: { comparisons: number }) => s.comparisons > 0),
    );
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const context = await browser.newContext({ extraHTTPHeaders: auth });
    page = await context.newPage();
    expect((await page.goto(`${ranker.baseUrl}/admin`))?.status()).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await ranker?.close();
    await removeRoot?.();
    const redis = new Redis('redis://127.0.0.1:6379');
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('lists every version with its state, its gate and its share of the traffic', async () => {
    expect(await tableRows(page, 'Scenes')).toEqual([
      ['feed', 'v3', 'ready', 'shadow 100 %'],
      ['feed', 'v2', 'ready', 'canary 40 %'],
      ['feed', 'v1', 'serving', 'stable'],
    ]);
    expect(await tableRows(page, 'Versions')).toEqual([
      ['v3', 'ready', 'pass', 'pass', 'pass', 'pass'],
      ['v2', 'ready', 'pass', 'pass', 'pass', 'pass'],
      ['v1', 'serving', 'pass', 'pass', 'pass', 'pass'],
    ]);
  });

  it('shows the split from traffic.yaml: stable, the canary share, the shadow', async () => {
    const split = Object.fromEntries(
      await page
        .getByRole('table', { name: 'Traffic split' })
        .getByRole('row')
        .evaluateAll((rows) =>
          rows.map((r) => [
            r.querySelector('th')!.textContent!.trim(),
            r.querySelector('td')!.textContent!.replace(/\s+/g, ' ').trim(),
          ]),
        ),
    );
    expect(split).toEqual({
      'Set by': 'traffic.yaml',
      Stable: 'v1',
      Canary: 'v2 takes 40 %',
      Shadow: 'v3 scores 100 % of requests off the response path',
    });
  });

  it('shows the canary against stable with the figures of the requests sent, and the guardrail', async () => {
    const feed = page.getByRole('region', { name: 'Scene feed' });
    expect(await feed.innerText()).toContain('Canary v2 against stable v1 over the last 300 s.');
    const [requests, errors, p99] = await tableRows(page, 'Canary health');
    const [stableRequests, canaryRequests] = requests.map((c) => Number(c.replace(/,/g, '')));
    expect(stableRequests).toBeGreaterThan(0);
    expect(canaryRequests).toBeGreaterThan(0);
    expect(stableRequests + canaryRequests).toBe(40);
    expect(requests[2]).toBe('judged from 100 requests each');
    expect(errors.slice(0, 2)).toEqual(['0 %', '0 %']);
    expect(errors[2]).toBe('at most stable + 2 pts, once the canary has 5 errors');
    expect(p99[0]).toMatch(/^\d+(\.\d+)? ms$/);
    expect(p99[2]).toBe('at most 1.5 × stable');
    // 40 requests are fewer than the guardrail's 100: nothing is judged yet.
    expect(await feed.innerText()).toContain('Guardrail: collecting, too few requests to judge');
  });

  it('shows how the shadow ranked the same requests against each served version', async () => {
    const rows = await tableRows(page, 'Shadow differences');
    expect(rows.length).toBeGreaterThan(0);
    for (const [primary, compared, failed, nonFinite, , overlap] of rows) {
      expect(['v1', 'v2']).toContain(primary);
      expect(Number(compared)).toBeGreaterThan(0);
      expect(failed).toBe('0');
      expect(nonFinite).toBe('0');
      // v3 is a copy of what served: the same top items
      expect(overlap).toBe('100 %');
    }
  });
});

describe('/admin over HTTP', () => {
  let ranker: RankerClient;

  beforeAll(async () => {
    ranker = await RankerClient.start({ RANKER_ADMIN_TOKEN: TOKEN });
  });
  afterAll(() => ranker.close());

  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${ranker.baseUrl}${path}`, { headers, redirect: 'manual' });
  const postForm = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${ranker.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body,
      redirect: 'manual',
    });
  const signIn = async () => {
    const response = await postForm(
      '/admin/login',
      new URLSearchParams({ token: TOKEN }).toString(),
    );
    return response.headers.get('set-cookie')!.split(';')[0];
  };

  it('signs in with a form post: 303 to /admin with an HttpOnly, SameSite=Strict cookie', async () => {
    const response = await postForm('/admin/login', `token=${encodeURIComponent(TOKEN)}`);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/admin');
    const cookie = response.headers.get('set-cookie')!;
    expect(cookie).toMatch(
      /^ranker_admin_session=v1\.\d+\.[\w-]{43}; Path=\/admin; Max-Age=28800; HttpOnly; SameSite=Strict$/,
    );
    expect(cookie).not.toContain(TOKEN);
    const page = await get('/admin', { cookie: cookie.split(';')[0] });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(await page.text()).toContain('<table aria-label="Scenes">');
  });

  it('marks the cookie Secure behind an HTTPS proxy', async () => {
    const response = await postForm('/admin/login', `token=${encodeURIComponent(TOKEN)}`, {
      'x-forwarded-proto': 'https',
    });
    expect(response.headers.get('set-cookie')).toMatch(/; Secure$/);
  });

  it('answers the form without a session with 401, a tampered session too', async () => {
    const plain = await get('/admin');
    expect(plain.status).toBe(401);
    expect(plain.headers.get('www-authenticate')).toBe('Bearer realm="ranker-admin"');
    expect(await plain.text()).toContain('action="/admin/login"');
    const cookie = await signIn();
    const tampered = cookie.replace(/\.(\d+)\./, (_m, expiry) => `.${Number(expiry) + 1}.`);
    expect((await get('/admin', { cookie: tampered })).status).toBe(401);
    expect((await get('/admin', { cookie: `ranker_admin_session=${TOKEN}` })).status).toBe(401);
  });

  it('serves the page to a script with the bearer token, and refuses a wrong one', async () => {
    expect((await get('/admin', { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    const wrong = await get('/admin', { authorization: `Bearer ${TOKEN}x` });
    expect(wrong.status).toBe(403);
    expect(await wrong.text()).toContain('Wrong token.');
  });

  it.each([
    ['a wrong token', `token=${TOKEN}x`, 403, 'Wrong token.'],
    ['no token', '', 400, 'Enter the admin token.'],
    ['an empty token', 'token=', 400, 'Enter the admin token.'],
    ['two tokens', `token=${TOKEN}&token=${TOKEN}`, 400, 'Enter the admin token.'],
  ])('answers %s with the form again and a message', async (_name, body, status, message) => {
    const response = await postForm('/admin/login', body);
    expect(response.status).toBe(status);
    expect(response.headers.get('set-cookie')).toBeNull();
    expect(await response.text()).toContain(`<p class="error" role="alert">${message}</p>`);
  });

  it('refuses a login body that is not a form, or too big, with the error body of the API', async () => {
    const json = await fetch(`${ranker.baseUrl}/admin/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: TOKEN }),
    });
    expect(json.status).toBe(415);
    expect(await json.json()).toMatchObject({
      code: 'UNSUPPORTED_MEDIA_TYPE',
      details: [{ path: 'headers.content-type' }],
    });
    const big = await postForm('/admin/login', `token=${'x'.repeat(5000)}`);
    expect(big.status).toBe(413);
    expect(((await big.json()) as { code: string }).code).toBe('BODY_TOO_LARGE');
    const latin1 = await postForm('/admin/login', `token=${TOKEN}`, {
      'content-type': 'application/x-www-form-urlencoded; charset=iso-8859-1',
    });
    expect(latin1.status).toBe(415);
  });

  it('keeps refusing form bodies on every other route with 415', async () => {
    const reply = await ranker.request(
      'POST',
      '/v1/scenes/feed/rank',
      'user=u1&candidates=i1',
      'application/x-www-form-urlencoded',
    );
    expect(reply.status).toBe(415);
    expect(reply.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    // not even read: a form body over the login limit still gets 415, not 413
    const big = await ranker.request(
      'POST',
      '/v1/scenes/feed/rank',
      `x=${'y'.repeat(10_000)}`,
      'application/x-www-form-urlencoded',
    );
    expect(big.status).toBe(415);
  });

  it('logs out: 303 to /admin, clearing the cookie', async () => {
    const response = await postForm('/admin/logout', '', { cookie: await signIn() });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/admin');
    expect(response.headers.get('set-cookie')).toMatch(
      /^ranker_admin_session=; Path=\/admin; Max-Age=0;/,
    );
  });

  it('counts sign-ins by outcome', async () => {
    const metrics = await (await get('/metrics')).text();
    const count = (via: string, outcome: string) =>
      Number(
        new RegExp(
          `ranker_admin_page_sign_ins_total\\{via="${via}",outcome="${outcome}"\\} (\\d+)`,
        ).exec(metrics)?.[1],
      );
    expect(count('form', 'ok')).toBeGreaterThanOrEqual(3);
    expect(count('form', 'wrong_token')).toBe(1);
    expect(count('form', 'missing_token')).toBe(3);
    expect(count('bearer', 'ok')).toBe(1);
    expect(count('bearer', 'wrong_token')).toBe(1);
  });

  it('is left out of the OpenAPI document', async () => {
    const doc = await ranker.request('GET', '/docs');
    expect(Object.keys(doc.body.paths).filter((p) => p.startsWith('/admin'))).toEqual([]);
  });
});

describe('/admin without RANKER_ADMIN_TOKEN', () => {
  it('is not served at all: 404 like any unknown route', async () => {
    const ranker = await RankerClient.start({ RANKER_ADMIN_TOKEN: '' });
    try {
      const unknown = await ranker.request('GET', '/no-such-page');
      for (const [method, path] of [
        ['GET', '/admin'],
        ['POST', '/admin/login'],
        ['POST', '/admin/logout'],
      ]) {
        const response = await fetch(`${ranker.baseUrl}${path}`, {
          method,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: method === 'POST' ? `token=${TOKEN}` : undefined,
        });
        expect(response.status).toBe(404);
        const body = (await response.json()) as Record<string, unknown>;
        expect(body).toMatchObject({ code: 'NOT_FOUND', message: `Cannot ${method} ${path}` });
        expect(Object.keys(body).sort()).toEqual(Object.keys(unknown.body).sort());
      }
    } finally {
      await ranker.close();
    }
  });

  it('a token under 16 characters stops the app at boot, naming the variable, not the value', async () => {
    const saved = process.env.RANKER_ADMIN_TOKEN;
    process.env.RANKER_ADMIN_TOKEN = 'too-short';
    try {
      await expect(createRankerApp(false)).rejects.toThrow(
        /RANKER_ADMIN_TOKEN=<secret>: RANKER_ADMIN_TOKEN must be longer than or equal to 16 characters/,
      );
    } finally {
      if (saved === undefined) delete process.env.RANKER_ADMIN_TOKEN;
      else process.env.RANKER_ADMIN_TOKEN = saved;
    }
  });
});
