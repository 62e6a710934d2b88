import { ErrorDetail } from '@app/common';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { SPEC_VERSIONS, trafficConfigArb } from './traffic-arbitraries';
import { DEFAULT_GUARDRAIL, TrafficConfig, withoutCanary } from './traffic-config';
import { TrafficInvalidError } from './traffic-errors';
import { parseTrafficConfig, readTrafficConfig } from './traffic-schema';

const FIXTURE = join(__dirname, 'fixtures/traffic.yaml');
const VERSIONS = ['v1', 'v2', 'v3', 'v4', 'v5'];

/** A valid config using every key; each broken case changes one thing in a fresh copy. */
function valid() {
  return {
    stable: 'v1',
    canary: {
      version: 'v2',
      percent: 5,
      guardrail: { window: 60, minRequests: 50, maxErrorRateDelta: 0.05 },
    },
    experiments: [
      {
        name: 'exp',
        salt: 's1',
        arms: [
          { name: 'control', version: 'v1', share: 10 },
          { name: 'treatment', version: 'v3', share: 10 },
        ],
      },
    ],
    shadow: { version: 'v4' },
  };
}
type Raw = ReturnType<typeof valid> & Record<string, unknown>;

function errorsOf(mutate: (raw: Raw) => void, versions = VERSIONS): ErrorDetail[] {
  const raw = structuredClone(valid()) as Raw;
  mutate(raw);
  const { config, errors } = readTrafficConfig(raw, versions);
  expect(config).toBeUndefined();
  return errors;
}

const paths = (errors: ErrorDetail[]) => errors.map((e) => e.path);

describe('readTrafficConfig', () => {
  it('reads the README example (fixtures/traffic.yaml) into its typed form', () => {
    const raw = parse(readFileSync(FIXTURE, 'utf8'));
    expect(parseTrafficConfig(raw, VERSIONS, FIXTURE)).toEqual({
      stable: 'v1',
      canary: {
        version: 'v2',
        percent: 5,
        guardrail: {
          window: 300,
          minRequests: 100,
          minErrors: 5,
          maxErrorRateDelta: 0.02,
          maxErrorRatio: 3,
          maxP99Ratio: 1.5,
        },
      },
      experiments: [
        {
          name: 'fusion-weights',
          salt: 'fusion-weights-2024-06',
          arms: [
            { name: 'control', version: 'v1', share: 10 },
            { name: 'treatment', version: 'v3', share: 10 },
          ],
        },
        {
          name: 'new-features',
          salt: 'new-features-2024-07',
          arms: [{ name: 'treatment', version: 'v4', share: 5 }],
        },
      ],
      shadow: { version: 'v5', percent: 50, topK: 50 },
    } satisfies TrafficConfig);
  });

  it('needs only stable; no experiments reads as an empty list', () => {
    expect(readTrafficConfig({ stable: 'v1' }, VERSIONS)).toEqual({
      config: { stable: 'v1', experiments: [] },
      errors: [],
    });
  });

  it('gives a canary without guardrail the default one, and fills the guardrail defaults', () => {
    const bare = readTrafficConfig(
      { stable: 'v1', canary: { version: 'v2', percent: 1 } },
      VERSIONS,
    );
    expect(bare.config?.canary?.guardrail).toEqual(DEFAULT_GUARDRAIL);
    const partial = parseTrafficConfig(valid(), VERSIONS, 'x').canary?.guardrail;
    // Limits not written are off: only maxErrorRateDelta was set.
    expect(partial).toEqual({ window: 60, minRequests: 50, minErrors: 5, maxErrorRateDelta: 0.05 });
  });

  it('defaults the shadow to 100 percent and leaves topK to the response', () => {
    expect(parseTrafficConfig(valid(), VERSIONS, 'x').shadow).toEqual({
      version: 'v4',
      percent: 100,
    });
  });

  it('accepts shares summing to exactly 100 on the 0.01 grid (33.33 + 33.33 + 33.34)', () => {
    const arms = [33.33, 33.33, 33.34].map((share, i) => ({ name: `a${i}`, version: 'v1', share }));
    const { errors } = readTrafficConfig(
      { stable: 'v1', experiments: [{ name: 'e', salt: 's', arms }] },
      VERSIONS,
    );
    expect(errors).toEqual([]);
  });

  it('allows stable as an arm and one version in two arms (an A/A test)', () => {
    const arms = [
      { name: 'a', version: 'v1', share: 20 },
      { name: 'b', version: 'v1', share: 20 },
    ];
    expect(
      readTrafficConfig({ stable: 'v1', experiments: [{ name: 'aa', salt: 's', arms }] }, VERSIONS)
        .errors,
    ).toEqual([]);
  });

  it('round-trips any valid config through JSON, which is how overrides are stored', () => {
    fc.assert(
      fc.property(trafficConfigArb, (config) => {
        const again = parseTrafficConfig(JSON.parse(JSON.stringify(config)), SPEC_VERSIONS, 'x');
        expect(again).toEqual(config);
        expect(
          parseTrafficConfig(withoutCanary(config), SPEC_VERSIONS, 'x').canary,
        ).toBeUndefined();
      }),
    );
  });

  describe('refuses, with the path of each problem', () => {
    it.each([
      ['the root', (r: Raw) => (r.rollout = 1), 'rollout'],
      ['canary', (r: Raw) => ((r.canary as Record<string, unknown>).weight = 1), 'canary.weight'],
      [
        'the guardrail',
        (r: Raw) => ((r.canary.guardrail as Record<string, unknown>).maxP95Ratio = 2),
        'canary.guardrail.maxP95Ratio',
      ],
      [
        'an experiment',
        (r: Raw) => ((r.experiments[0] as Record<string, unknown>).seed = 1),
        'experiments[0].seed',
      ],
      [
        'an arm',
        (r: Raw) => ((r.experiments[0].arms[1] as Record<string, unknown>).percent = 1),
        'experiments[0].arms[1].percent',
      ],
      ['shadow', (r: Raw) => ((r.shadow as Record<string, unknown>).share = 1), 'shadow.share'],
      [
        '__proto__ (an own key of parsed YAML and JSON)',
        (r: Raw) => Object.defineProperty(r, '__proto__', { value: {}, enumerable: true }),
        '__proto__',
      ],
      // Found by the admin API fuzz: the empty key vanished from the path ('' and 'canary.').
      ['the root, the empty key', (r: Raw) => ((r as Record<string, unknown>)[''] = 1), '[""]'],
      [
        'canary, the empty key',
        (r: Raw) => ((r.canary as Record<string, unknown>)[''] = 1),
        'canary[""]',
      ],
    ])('an unknown key in %s', (_, mutate, path) => {
      const errors = errorsOf(mutate);
      expect(errors).toEqual([
        { path, message: expect.stringMatching(/^unknown key \(allowed: /) },
      ]);
    });

    it.each([
      ['stable', (r: Raw) => (r.stable = 'v9')],
      ['canary.version', (r: Raw) => (r.canary.version = 'v9')],
      ['experiments[0].arms[1].version', (r: Raw) => (r.experiments[0].arms[1].version = 'v9')],
      ['shadow.version', (r: Raw) => (r.shadow.version = 'v9')],
    ])('a version the scene lacks at %s, naming the ones it has', (path, mutate) => {
      expect(errorsOf(mutate)).toEqual([
        {
          path,
          message: "'v9' is not a version of this scene (available: v1, v2, v3, v4, v5)",
        },
      ]);
    });

    it('lists at most 20 available versions, saying how many more there are', () => {
      const many = Array.from({ length: 45 }, (_, i) => `v${String(i).padStart(2, '0')}`);
      const [error] = errorsOf((r) => (r.stable = 'nope'), many);
      expect(error.message).toMatch(/available: v00, .*, v19 and 25 more\)$/);
    });

    it('shares summing over 100', () => {
      expect(errorsOf((r) => (r.experiments[0].arms[1].share = 95))).toEqual([
        { path: 'experiments[0].arms', message: 'shares sum to 105, over 100' },
      ]);
    });

    it.each([
      ['a negative share', -1, 'must be >= 0, got -1'],
      ['a share over 100', 100.5, 'must be <= 100, got 100.5'],
      ['a share finer than 0.01', 10.005, 'must be a multiple of 0.01, got 10.005'],
      ['a share that is text', '10%', 'must be a number, got string "10%"'],
    ])('%s', (_, share, message) => {
      const errors = errorsOf((r) => (r.experiments[0].arms[0].share = share as number));
      expect(errors).toContainEqual({ path: 'experiments[0].arms[0].share', message });
    });

    it.each([
      [100, /^must be below 100: a canary needs stable traffic/],
      [101, /^must be <= 100/],
      [-0.5, /^must be >= 0/],
      [0.001, /^must be a multiple of 0.01/],
    ])('canary.percent %p', (percent, message) => {
      expect(errorsOf((r) => (r.canary.percent = percent))).toEqual([
        { path: 'canary.percent', message: expect.stringMatching(message) },
      ]);
    });

    it.each([
      ['window', 5, 'must be >= 10, got 5'],
      ['window', 2.5, 'must be an integer, got 2.5'],
      ['minRequests', 0, 'must be >= 1, got 0'],
      ['minErrors', 0, 'must be >= 1, got 0'],
      ['maxErrorRateDelta', 1.5, 'must be <= 1, got 1.5'],
      ['maxErrorRatio', 0.5, 'must be >= 1, got 0.5'],
      ['maxP99Ratio', 0.9, 'must be >= 1, got 0.9'],
    ])('guardrail %s %p', (key, value, message) => {
      const errors = errorsOf(
        (r) => ((r.canary.guardrail as Record<string, unknown>)[key] = value),
      );
      expect(errors).toEqual([{ path: `canary.guardrail.${key}`, message }]);
    });

    it('a guardrail that sets no limit', () => {
      expect(errorsOf((r) => (r.canary.guardrail = { window: 60 } as never))).toEqual([
        {
          path: 'canary.guardrail',
          message: 'must set at least one of maxErrorRateDelta, maxErrorRatio, maxP99Ratio',
        },
      ]);
    });

    it('duplicate experiment names and salts, duplicate arm names', () => {
      const errors = errorsOf((r) => {
        r.experiments.push(structuredClone(r.experiments[0]));
        r.experiments[0].arms[1].name = 'control';
        r.experiments[1].arms[0].share = 1;
        r.experiments[1].arms[1].share = 1;
      });
      expect(errors).toEqual([
        {
          path: 'experiments[0].arms[1].name',
          message: "'control' is already used at experiments[0].arms[0].name",
        },
        { path: 'experiments[1].name', message: "'exp' is already used at experiments[0].name" },
        {
          path: 'experiments[1].salt',
          message:
            "'s1' is already used at experiments[0].salt: experiments with one salt would split users alike",
        },
      ]);
    });

    it.each([
      ['canary.version', (r: Raw) => (r.canary.version = 'v1'), /is the stable version/],
      [
        'experiments[0].arms[1].version',
        (r: Raw) => (r.experiments[0].arms[1].version = 'v2'),
        /is the canary; an arm must not serve it/,
      ],
      ['shadow.version', (r: Raw) => (r.shadow.version = 'v1'), /is the stable version; a shadow/],
      ['shadow.version', (r: Raw) => (r.shadow.version = 'v2'), /is the canary; a shadow/],
      [
        'shadow.version',
        (r: Raw) => (r.shadow.version = 'v3'),
        /serves an arm \(experiments\[0\]\.arms\[1\]\.version\); a shadow must serve no traffic/,
      ],
    ])('a version in conflicting roles at %s', (path, mutate, message) => {
      expect(errorsOf(mutate)).toEqual([{ path, message: expect.stringMatching(message) }]);
    });

    it.each([
      ['a list', []],
      ['text', 'stable: v1'],
      ['null', null],
      ['nothing', undefined],
    ])('a root that is %s', (_, raw) => {
      const { config, errors } = readTrafficConfig(raw, VERSIONS);
      expect(config).toBeUndefined();
      expect(errors[0]).toEqual({ path: '', message: expect.stringMatching(/^must be a mapping/) });
    });

    it('more than 16 experiments or arms, and names that cannot be labels', () => {
      const arm = (j: number) => ({ name: `a${j}`, version: 'v1', share: 1 });
      const errors = errorsOf((r) => {
        r.experiments = Array.from({ length: 17 }, (_, i) => ({
          name: `e${i}`,
          salt: `s${i}`,
          arms: [arm(0)],
        }));
      });
      expect(errors).toEqual([
        { path: 'experiments', message: 'must have at most 16 entries, got 17' },
      ]);
      const armErrors = errorsOf((r) => {
        r.experiments[0].arms = Array.from({ length: 17 }, (_, j) => arm(j));
        r.experiments[0].name = 'has space';
      });
      expect(paths(armErrors)).toEqual(['experiments[0].name', 'experiments[0].arms']);
    });

    it('every problem at once', () => {
      const errors = errorsOf((r) => {
        r.stable = '';
        r.canary.percent = 250;
        r.experiments[0].arms[0].version = 'v0';
        r.experiments[0].salt = 'x'.repeat(300);
        (r.shadow as Record<string, unknown>).topK = 0;
      });
      expect(paths(errors)).toEqual([
        'stable',
        'canary.percent',
        'experiments[0].salt',
        'experiments[0].arms[0].version',
        'shadow.topK',
      ]);
    });

    it('throws TrafficInvalidError (422) naming where the config came from', () => {
      const raw = { stable: 'v9' };
      expect(() => parseTrafficConfig(raw, VERSIONS, 'models/feed/traffic.yaml')).toThrow(
        TrafficInvalidError,
      );
      try {
        parseTrafficConfig(raw, VERSIONS, 'models/feed/traffic.yaml');
      } catch (error) {
        expect(error).toMatchObject({
          code: 'TRAFFIC_INVALID',
          status: 422,
          where: 'models/feed/traffic.yaml',
          details: [{ path: 'stable' }],
        });
      }
    });
  });

  it('never throws on any JSON value, and accepts a config only without errors', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (raw) => {
        const { config, errors } = readTrafficConfig(raw, VERSIONS);
        expect(config === undefined).toBe(errors.length > 0);
      }),
    );
  });

  it('never throws on a valid config with any one value replaced', () => {
    const leaf = fc.oneof(
      fc.jsonValue({ maxDepth: 2 }),
      fc.constantFrom(-1, 0, 100, Infinity, NaN, 'v9', '', '__proto__'),
    );
    fc.assert(
      fc.property(trafficConfigArb, fc.nat(), leaf, (config, pick, value) => {
        const raw = JSON.parse(JSON.stringify(config));
        const slots = leaves(raw);
        if (slots.length > 0) {
          const [holder, key] = slots[pick % slots.length];
          holder[key] = value;
        }
        const { config: read, errors } = readTrafficConfig(raw, SPEC_VERSIONS);
        expect(read === undefined).toBe(errors.length > 0);
        for (const error of errors) expect(typeof error.path).toBe('string');
      }),
    );
  });
});

/** Every [holder, key] of a scalar inside `value`. */
function leaves(value: unknown): [Record<string, unknown>, string][] {
  if (value === null || typeof value !== 'object') return [];
  const holder = value as Record<string, unknown>;
  return Object.keys(holder).flatMap((key) =>
    holder[key] !== null && typeof holder[key] === 'object'
      ? leaves(holder[key])
      : [[holder, key] as [Record<string, unknown>, string]],
  );
}
