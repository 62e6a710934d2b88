import { median, RoundLog, roundsFromEnv, secondsFromEnv, spread } from './rounds';

describe('interleaved rounds helper', () => {
  it('takes the median of odd and even counts without reordering the input', () => {
    const values = [3, 1, 2];
    expect(median(values)).toBe(2);
    expect(values).toEqual([3, 1, 2]);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('reports the spread as min, max and (max - min) / median', () => {
    expect(spread([0.8, 1.0, 0.9])).toEqual({
      median: 0.9,
      min: 0.8,
      max: 1.0,
      relative: expect.closeTo(0.2 / 0.9, 10),
    });
    expect(spread([0.5]).relative).toBe(0);
  });

  it('keeps each figure per round and reports its median', () => {
    const log = new RoundLog();
    log.add({ ratio: 0.7, raw: 100 });
    log.add({ ratio: 0.9, raw: 120 });
    log.add({ ratio: 0.8, raw: 90 });
    expect(log.byRound('ratio')).toEqual([0.7, 0.9, 0.8]);
    expect(log.median('raw')).toBe(100);
    expect(log.spread('ratio').max).toBe(0.9);
    expect(() => log.median('missing')).toThrow(/no figure "missing"/);
  });

  it('reads BENCH_ROUNDS and phase seconds from the environment, rejecting nonsense', () => {
    expect(roundsFromEnv({})).toBe(3);
    expect(roundsFromEnv({ BENCH_ROUNDS: '5' })).toBe(5);
    expect(() => roundsFromEnv({ BENCH_ROUNDS: '0' })).toThrow(/BENCH_ROUNDS/);
    expect(() => roundsFromEnv({ BENCH_ROUNDS: 'two' })).toThrow(/BENCH_ROUNDS/);
    expect(secondsFromEnv('BENCH_SECONDS', 4, {})).toBe(4);
    expect(secondsFromEnv('BENCH_SECONDS', 4, { BENCH_SECONDS: '0.5' })).toBe(0.5);
    expect(() => secondsFromEnv('BENCH_SECONDS', 4, { BENCH_SECONDS: '-1' })).toThrow(
      /BENCH_SECONDS must be a positive number/,
    );
  });
});

describe('RoundLog.ratioDetails', () => {
  it('lists each ratio per round and its min-max, rounded for JSON', () => {
    const log = new RoundLog();
    log.add({ large: 0.81234, small: NaN });
    log.add({ large: 0.9, small: 0.6 });
    const details = log.ratioDetails(['large']);
    expect(details).toEqual({
      ratios_by_round: { large: [0.812, 0.9] },
      ratio_ranges: { large: [0.812, 0.9] },
    });
    expect(log.ratioDetails(['small']).ratios_by_round.small).toEqual([null, 0.6]);
  });
});
