/**
 * The feature fetch gets what is left of the request's deadline (ranker app over HTTP, on a
 * redis-server of its own that the spec freezes with SIGSTOP): with FEATURES_FETCH_TIMEOUT_MS at
 * 10 s, a call with `timeoutMs: 300` answers 504 at its deadline instead of waiting 10 s for the
 * store and only then failing. No timing is checked tightly: the bound is half the store's wait.
 */
import { Logger } from '@nestjs/common';
import { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RankerClient } from './ranker-client';
import { freePort } from '../support/free-port';
import { startRedis } from '../support/redis-server';

const STORE_WAIT_MS = 10_000;

/** A throwaway redis-server (no persistence) on `port`; resolves once it answers PING. */
describe('feature fetch within the request deadline (own redis-server, frozen)', () => {
  let dir: string;
  let redis: ChildProcess;
  let ranker: RankerClient;
  /** The same store with a short FEATURES_FETCH_TIMEOUT_MS: the smaller wait wins. */
  let quick: RankerClient;
  const body = (timeoutMs?: number) => ({
    user: { id: 'u1' },
    candidates: [{ id: 'i1' }, { id: 'i2' }],
    ...(timeoutMs && { timeoutMs }),
  });

  beforeAll(async () => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    dir = mkdtempSync(join(tmpdir(), 'ranker-fetch-budget-'));
    const port = await freePort();
    redis = await startRedis(port, dir);
    ranker = await RankerClient.start({
      FEATURE_STORE: 'redis',
      REDIS_URL: `redis://127.0.0.1:${port}`,
      FEATURES_REDIS_KEY_PREFIX: `fetch-budget-${process.pid}:`,
      FEATURES_FETCH_TIMEOUT_MS: String(STORE_WAIT_MS),
    });
    quick = await RankerClient.start({
      FEATURE_STORE: 'redis',
      REDIS_URL: `redis://127.0.0.1:${port}`,
      FEATURES_REDIS_KEY_PREFIX: `fetch-budget-${process.pid}:`,
      FEATURES_FETCH_TIMEOUT_MS: '200',
    });
  });
  afterAll(async () => {
    redis?.kill('SIGCONT');
    await ranker?.close();
    await quick?.close();
    if (redis && redis.exitCode === null) {
      const exited = new Promise((done) => redis.once('exit', done));
      redis.kill('SIGKILL');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
    jest.restoreAllMocks();
  });

  it('answers 200 while Redis answers', async () => {
    const reply = await ranker.rank('feed', body(5_000));
    expect(reply.status).toBe(200);
    expect(reply.body.degraded).toBe(false);
  });

  it('answers 504 by the deadline, not after FEATURES_FETCH_TIMEOUT_MS, while Redis is frozen', async () => {
    redis.kill('SIGSTOP');
    try {
      const started = performance.now();
      const reply = await ranker.rank('feed', body(300));
      const elapsed = performance.now() - started;
      expect(reply.status).toBe(504);
      expect(reply.body.code).toBe('DEADLINE_EXCEEDED');
      expect(elapsed).toBeLessThan(STORE_WAIT_MS / 2);
    } finally {
      redis.kill('SIGCONT');
    }
    // Thawed, the same app answers again without a restart.
    const reply = await ranker.rank('feed', body(5_000));
    expect(reply.status).toBe(200);
  });

  it('keeps FEATURES_FETCH_TIMEOUT_MS when it is shorter than the time left: degraded, not 504', async () => {
    redis.kill('SIGSTOP');
    try {
      const reply = await quick.rank('feed', body(30_000));
      expect(reply.status).toBe(200);
      expect(reply.body.degraded).toBe(true);
    } finally {
      redis.kill('SIGCONT');
    }
  });
});
