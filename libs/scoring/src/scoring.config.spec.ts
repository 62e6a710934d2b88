import { ConfigInvalidError, loadTypedConfig } from '@app/common';
import fc from 'fast-check';
import { availableParallelism } from 'node:os';
import { ScoringConfig } from './scoring.config';

const load = (env: Record<string, string>) => loadTypedConfig(ScoringConfig, (name) => env[name]);

/** Each integer setting and the range the README documents for it. */
const RANGES: Record<string, [number, number]> = {
  SCORING_MAX_QUEUE_WAIT_MS: [0, 600_000],
  SCORING_MAX_CONCURRENT_BATCHES: [1, 256],
  SCORING_DEFAULT_INSTANCES: [1, 64],
  SCORING_WORKER_NICE: [0, 19],
  SCORING_SPARE_THREADS: [0, 1024],
  SCORING_BUFFER_POOL_MB: [0, 4096],
};

describe('ScoringConfig', () => {
  it('bounds no queue by wait, and sizes the rest by the cores, by default', () => {
    const cores = availableParallelism();
    expect({ ...load({}) }).toEqual({
      SCORING_MAX_QUEUE_WAIT_MS: 0,
      SCORING_MAX_CONCURRENT_BATCHES: cores,
      SCORING_DEFAULT_INSTANCES: cores,
      SCORING_WORKER_NICE: 10,
      SCORING_SPARE_THREADS: 2 * cores,
      SCORING_BUFFER_POOL_MB: 64,
      SCORING_ORT_TELEMETRY: false,
    });
  });

  it('takes a queue wait of 0 (none) to 600,000 ms', () => {
    expect(load({ SCORING_MAX_QUEUE_WAIT_MS: '100' }).SCORING_MAX_QUEUE_WAIT_MS).toBe(100);
    expect(load({ SCORING_MAX_QUEUE_WAIT_MS: '600000' }).SCORING_MAX_QUEUE_WAIT_MS).toBe(600_000);
  });

  it.each([
    ['SCORING_MAX_QUEUE_WAIT_MS', '-1'],
    ['SCORING_MAX_QUEUE_WAIT_MS', '600001'],
    ['SCORING_MAX_QUEUE_WAIT_MS', '2.5'],
    ['SCORING_MAX_QUEUE_WAIT_MS', '100ms'],
    ['SCORING_WORKER_NICE', '20'],
    ['SCORING_MAX_CONCURRENT_BATCHES', '0'],
    ['SCORING_ORT_TELEMETRY', 'maybe'],
  ])('refuses %s=%s, naming it', (name, raw) => {
    expect(() => load({ [name]: raw })).toThrow(ConfigInvalidError);
    expect(() => load({ [name]: raw })).toThrow(new RegExp(`${name}=`));
  });

  it('loads any value of an integer setting within its range, and refuses anything else naming the variable', () => {
    const numberish = fc.oneof(
      fc.integer({ min: -10, max: 700_000 }).map(String),
      fc.double({ noNaN: false }).map(String),
      fc.string(),
      fc.constantFrom(' 12 ', '0x10', '1e3', '', '  ', 'Infinity', '-0', '007'),
    );
    fc.assert(
      fc.property(fc.constantFrom(...Object.keys(RANGES)), numberish, (name, raw) => {
        const [min, max] = RANGES[name];
        const trimmed = raw.trim();
        // Only digits count: blanks (Number's 0) are refused, as the loader does.
        const value = trimmed === '' ? NaN : Number(trimmed);
        let loaded: unknown;
        try {
          loaded = (load({ [name]: raw }) as unknown as Record<string, unknown>)[name];
        } catch (error) {
          expect(error).toBeInstanceOf(ConfigInvalidError);
          expect((error as Error).message).toContain(`${name}=`);
          expect(Number.isInteger(value) && value >= min && value <= max).toBe(false);
          return;
        }
        // An empty value is unset: the default, itself within range.
        if (raw === '') expect(loaded).toBe(new ScoringConfig()[name as keyof ScoringConfig]);
        else expect(loaded).toBe(value);
        expect(Number.isInteger(loaded) && (loaded as number) >= min).toBe(true);
        expect(loaded as number).toBeLessThanOrEqual(max);
      }),
      { numRuns: 500 },
    );
  });
});
