import fc from 'fast-check';
import { ArmConfig, DEFAULT_GUARDRAIL, ExperimentConfig, TrafficConfig } from './traffic-config';

/** For specs: the versions the generated configs draw from. */
export const SPEC_VERSIONS = ['v1', 'v2', 'v3', 'v4', 'v5', 'v6', 'v7', 'v8'];

/** Shares (0-100, steps of 0.01) summing to at most 100, for `count` arms. */
export const sharesArb = (minArms = 1, maxArms = 4): fc.Arbitrary<number[]> =>
  fc
    .array(fc.integer({ min: 0, max: 10_000 }), { minLength: minArms, maxLength: maxArms })
    .map((buckets) => {
      const total = buckets.reduce((a, b) => a + b, 0);
      const scaled =
        total > 10_000 ? buckets.map((b) => Math.floor((b * 10_000) / total)) : buckets;
      return scaled.map((b) => b / 100);
    });

/**
 * For specs: any valid TrafficConfig over SPEC_VERSIONS (stable v1, canary v2, shadow v3 when
 * present; arms on the others or on stable), with unique names and salts.
 */
export const trafficConfigArb: fc.Arbitrary<TrafficConfig> = fc
  .record({
    canaryPercent: fc.option(fc.integer({ min: 0, max: 9_999 }), { nil: undefined }),
    experiments: fc.array(
      fc.record({
        salt: fc.string({ minLength: 1, maxLength: 12 }),
        shares: sharesArb(),
        versions: fc.array(fc.constantFrom('v1', 'v4', 'v5', 'v6', 'v7', 'v8'), {
          minLength: 4,
          maxLength: 4,
        }),
      }),
      { maxLength: 3 },
    ),
    shadow: fc.option(
      fc.record({
        percent: fc.integer({ min: 0, max: 10_000 }),
        topK: fc.option(fc.integer({ min: 1, max: 500 }), { nil: undefined }),
      }),
      { nil: undefined },
    ),
  })
  .map(({ canaryPercent, experiments, shadow }) => {
    const config: TrafficConfig = {
      stable: 'v1',
      experiments: experiments.map(({ salt, shares, versions }, i): ExperimentConfig => ({
        name: `e${i}`,
        salt: `${i}/${salt}`,
        arms: shares.map((share, j): ArmConfig => ({ name: `a${j}`, version: versions[j], share })),
      })),
    };
    if (canaryPercent !== undefined)
      config.canary = {
        version: 'v2',
        percent: canaryPercent / 100,
        guardrail: { ...DEFAULT_GUARDRAIL },
      };
    if (shadow) {
      config.shadow = { version: 'v3', percent: shadow.percent / 100 };
      if (shadow.topK !== undefined) config.shadow.topK = shadow.topK;
    }
    return config;
  });
