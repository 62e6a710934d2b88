import { Logger } from '@nestjs/common';
import { Registry } from 'prom-client';
import { CanaryGuard, RollbackDecision } from './canary-guard';
import { RolloutMetrics } from './rollout.metrics';
import { GuardrailConfig } from './traffic-config';

const GUARDRAIL: GuardrailConfig = {
  window: 60,
  minRequests: 100,
  minErrors: 5,
  maxErrorRateDelta: 0.02,
  maxErrorRatio: 3,
  maxP99Ratio: 1.5,
};

function setup(guardrail: Partial<GuardrailConfig> = {}, limitsOnly?: (keyof GuardrailConfig)[]) {
  let t = 0;
  const registry = new Registry();
  const metrics = new RolloutMetrics(registry);
  const decisions: RollbackDecision[] = [];
  const full = { ...GUARDRAIL, ...guardrail };
  if (limitsOnly) {
    for (const key of ['maxErrorRateDelta', 'maxErrorRatio', 'maxP99Ratio'] as const)
      if (!limitsOnly.includes(key)) delete full[key];
  }
  const guard = new CanaryGuard({
    scene: 'feed',
    stableVersion: 'v1',
    canary: { version: 'v2', percent: 5, guardrail: full },
    now: () => t,
    metrics,
    onRollback: (d) => decisions.push(d),
  });
  metrics.watch(guard);
  /** `n` outcomes of `arm`, `errors` of them failed (evenly spread), over `spanMs` from now. */
  const feed = (arm: 'canary' | 'stable', n: number, errors = 0, latencyMs = 20, spanMs = 0) => {
    for (let i = 0; i < n; i++) {
      const failed = Math.floor(((i + 1) * errors) / n) > Math.floor((i * errors) / n);
      guard.record(arm, !failed, latencyMs);
      t += spanMs / n;
    }
  };
  return { guard, registry, metrics, decisions, feed, advance: (ms: number) => (t += ms) };
}

describe('CanaryGuard', () => {
  let warned: jest.SpyInstance;
  beforeEach(() => {
    warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => warned.mockRestore());

  it('decides nothing below minRequests, even with every canary request failing', () => {
    const { guard, decisions, feed } = setup();
    feed('stable', 1_000);
    feed('canary', 99, 99);
    expect(guard.state).toBe('collecting');
    expect(decisions).toEqual([]);
    // ...nor when it is stable that lacks requests.
    const other = setup();
    other.feed('canary', 500, 500);
    other.feed('stable', 99);
    expect(other.guard.state).toBe('collecting');
    expect(other.decisions).toEqual([]);
  });

  it('keeps a canary under its limits serving, as healthy', () => {
    const { guard, decisions, feed } = setup();
    feed('stable', 1_000, 10, 20); // 1.0%
    feed('canary', 200, 5, 25); // 2.5%: delta 1.5 points, ratio 2.5x, p99 1.25x
    expect(guard.state).toBe('healthy');
    expect(decisions).toEqual([]);
  });

  it('rolls back a canary whose error rate exceeds stable by more than maxErrorRateDelta', () => {
    const { guard, decisions, feed, registry } = setup({}, ['maxErrorRateDelta']);
    feed('stable', 1_000, 10); // 1%
    feed('canary', 100, 0);
    expect(guard.state).toBe('healthy');
    let decision: RollbackDecision | undefined;
    for (let i = 0; i < 10 && !decision; i++) decision = guard.record('canary', false, 20);
    // 4 errors of 104 would be 3.85%, but minErrors is 5: the fifth error decides (4.76%).
    expect(decision).toMatchObject({
      scene: 'feed',
      version: 'v2',
      stableVersion: 'v1',
      limit: 'maxErrorRateDelta',
      reason: 'error rate 4.76% vs stable 1.00% (delta 3.76% > 2.00%)',
      canary: { requests: 105, errors: 5 },
      stable: { requests: 1_000, errors: 10 },
    });
    expect(decisions).toEqual([decision]);
    expect(warned).toHaveBeenCalledWith(
      'canary feed/v2 rolled back to v1: error rate 4.76% vs stable 1.00% (delta 3.76% > 2.00%)',
    );
    expect(guard.state).toBe('rolled_back');
    expect(guard.snapshot().rollback).toEqual(decision);
    // Once decided, later outcomes change nothing and decide nothing again.
    feed('canary', 500, 500);
    expect(decisions).toHaveLength(1);
    return expect(registry.metrics()).resolves.toContain(
      'ranker_rollout_rollbacks_total{scene="feed",version="v2",limit="maxErrorRateDelta"} 1',
    );
  });

  it('never lets a failing onRollback reach the request that recorded the outcome', () => {
    let t = 0;
    const guard = new CanaryGuard({
      scene: 'feed',
      stableVersion: 'v1',
      canary: {
        version: 'v2',
        percent: 5,
        guardrail: { ...GUARDRAIL, minRequests: 1, minErrors: 1 },
      },
      now: () => t++,
      onRollback: () => {
        throw new Error('store down');
      },
    });
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    guard.record('stable', true, 10);
    expect(() => guard.record('canary', false, 10)).not.toThrow();
    expect(guard.state).toBe('rolled_back');
    expect(logged).toHaveBeenCalledWith(
      expect.stringMatching(/^rollback of feed\/v2: Error: store down/),
    );
    logged.mockRestore();
  });

  it('waits for minErrors before judging error rates', () => {
    const { guard, decisions, feed } = setup({ minErrors: 20 }, ['maxErrorRateDelta']);
    feed('stable', 1_000, 0);
    feed('canary', 100, 19); // 19%, but 19 errors
    expect(guard.state).toBe('healthy');
    expect(decisions).toEqual([]);
    feed('canary', 1, 1);
    expect(decisions[0]?.limit).toBe('maxErrorRateDelta');
  });

  it('rolls back on maxErrorRatio, also against a stable without errors', () => {
    const ratio = setup({}, ['maxErrorRatio']);
    ratio.feed('stable', 1_000, 10); // 1%
    ratio.feed('canary', 200, 6); // 3%: exactly 3x, not over
    expect(ratio.decisions).toEqual([]);
    ratio.feed('canary', 1, 1); // 7 of 201
    expect(ratio.decisions[0]).toMatchObject({
      limit: 'maxErrorRatio',
      reason: 'error rate 3.48% vs stable 1.00% (3.48x, limit 3x)',
    });

    const clean = setup({}, ['maxErrorRatio']);
    clean.feed('stable', 1_000, 0);
    clean.feed('canary', 200, 5);
    expect(clean.decisions[0]?.reason).toBe(
      'error rate 2.50% vs stable 0.00% (stable had none, limit 3x)',
    );
  });

  it('rolls back a canary whose p99 exceeds maxP99Ratio times stable, and not one below', () => {
    const slow = setup({}, ['maxP99Ratio']);
    slow.feed('stable', 500, 0, 50);
    slow.feed('canary', 99, 0, 100);
    expect(slow.decisions).toEqual([]); // 99 canary outcomes: still collecting
    slow.feed('canary', 1, 0, 100);
    expect(slow.decisions[0]).toMatchObject({
      limit: 'maxP99Ratio',
      reason: expect.stringMatching(
        /^p99 10\d\.\d ms vs stable 5\d\.\d ms \((1\.9\d|2\.0\d)x, limit 1\.5x\)$/,
      ),
    });
    expect(slow.decisions[0].canary.p99Ms).toBeGreaterThanOrEqual(100);

    const fine = setup({}, ['maxP99Ratio']);
    fine.feed('stable', 500, 0, 50);
    fine.feed('canary', 500, 0, 70); // 1.4x
    expect(fine.guard.state).toBe('healthy');
    expect(fine.decisions).toEqual([]);
  });

  it('judges only the window: errors older than it no longer count', () => {
    const { guard, decisions, feed, advance } = setup({ window: 60 }, ['maxErrorRateDelta']);
    feed('canary', 100, 50); // bad, but stable has nothing yet
    expect(guard.state).toBe('collecting');
    advance(61_000);
    feed('stable', 200);
    feed('canary', 100);
    expect(guard.snapshot()).toMatchObject({
      state: 'healthy',
      canary: { requests: 100, errors: 0 },
      stable: { requests: 200, errors: 0 },
    });
    expect(decisions).toEqual([]);
  });

  it('shows each watched guard in the gauges when scraped, and forgets an unwatched one', async () => {
    const { guard, registry, metrics, feed } = setup();
    feed('stable', 200, 2, 20);
    feed('canary', 150, 0, 30);
    const text = await registry.metrics();
    expect(text).toContain(
      'ranker_rollout_guard_state{scene="feed",version="v2",state="healthy"} 1',
    );
    expect(text).toContain(
      'ranker_rollout_guard_state{scene="feed",version="v2",state="collecting"} 0',
    );
    expect(text).toContain(
      'ranker_rollout_window_requests{scene="feed",version="v2",arm="canary"} 150',
    );
    expect(text).toContain(
      'ranker_rollout_window_error_rate{scene="feed",version="v2",arm="stable"} 0.01',
    );
    expect(text).toMatch(
      /ranker_rollout_window_p99_ms\{scene="feed",version="v2",arm="canary"\} 3\d\.\d+/,
    );
    metrics.unwatch(guard);
    expect(await registry.metrics()).not.toContain('ranker_rollout_guard_state{');
  });
});
