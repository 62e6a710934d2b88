/**
 * The request metrics over HTTP: every answered request is counted by method, route pattern (never
 * the path a caller sent), status and error code, and timed by status class; refusals are counted
 * in full while their log lines are throttled.
 */
import { Logger } from '@nestjs/common';
import { RankerClient } from './ranker-client';

const RANK = '/v1/scenes/:scene/rank';

describe('HTTP request metrics', () => {
  let ranker: RankerClient;

  beforeAll(async () => {
    ranker = await RankerClient.start();
  });

  afterAll(async () => {
    await ranker?.close();
  });

  const requests = (labels: Record<string, string>) =>
    ranker.metric(
      `ranker_http_requests_total{method="${labels.method}",route="${labels.route}",` +
        `status="${labels.status}",code="${labels.code}"}`,
    );

  it('counts answers by route pattern, status and code, and times them by status class', async () => {
    const ok = await ranker.rank('feed', { user: { id: 'u1' }, candidates: [{ id: 'i1' }] });
    expect(ok.status).toBe(200);
    const invalid = await ranker.rank('feed', { user: {}, candidates: [] });
    expect(invalid.status).toBe(400);
    const unknown = await ranker.rank('no-such-scene', {
      user: { id: 'u1' },
      candidates: [{ id: 'i1' }],
    });
    expect(unknown.status).toBe(404);
    const nowhere = await fetch(`${ranker.baseUrl}/no/such/path/${Date.now()}`);
    expect(nowhere.status).toBe(404);

    expect(await requests({ method: 'POST', route: RANK, status: '200', code: 'ok' })).toBe(1);
    expect(
      await requests({ method: 'POST', route: RANK, status: '400', code: 'REQUEST_INVALID' }),
    ).toBe(1);
    expect(
      await requests({ method: 'POST', route: RANK, status: '404', code: 'SCENE_NOT_FOUND' }),
    ).toBe(1);
    // Any path no route matches is one series, whatever the path.
    expect(
      await requests({ method: 'GET', route: 'unmatched', status: '404', code: 'NOT_FOUND' }),
    ).toBe(1);
    expect(
      await ranker.metric(
        `ranker_http_request_ms_count{method="POST",route="${RANK}",status_class="2xx"}`,
      ),
    ).toBe(1);
    expect(
      await ranker.metric(
        `ranker_http_request_ms_count{method="POST",route="${RANK}",status_class="4xx"}`,
      ),
    ).toBe(2);
  });

  it('counts every refusal of a burst while logging at most ten a second of them', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const before = await requests({
        method: 'POST',
        route: RANK,
        status: '400',
        code: 'REQUEST_INVALID',
      });
      const replies = await Promise.all(
        Array.from({ length: 50 }, () => ranker.rank('feed', { user: { id: '' }, candidates: [] })),
      );
      expect(replies.every((r) => r.status === 400)).toBe(true);
      expect(
        await requests({ method: 'POST', route: RANK, status: '400', code: 'REQUEST_INVALID' }),
      ).toBe(before + 50);
      const lines = warn.mock.calls.filter(([message]) => String(message).includes('400'));
      // Ten a second at most: a burst that spans a second's edge may log two windows' worth.
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.length).toBeLessThanOrEqual(20);
    } finally {
      warn.mockRestore();
    }
  });
});
