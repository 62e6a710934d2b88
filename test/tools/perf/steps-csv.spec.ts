import { StepSummary } from './step-summary';
import { stepsToCsv } from './steps-csv';

const step = (over: Partial<StepSummary>): StepSummary => ({
  mode: 'concurrency',
  level: 2,
  seconds: 10.0004,
  requests: 101,
  ok: 100,
  failed: 1,
  requestsPerS: 9.99961,
  candidatesPerS: 29998.8,
  p50Ms: 180.123,
  p90Ms: 200.5,
  p99Ms: 250.777,
  errors: { '504 SCORING_TIMEOUT': 1 },
  ...over,
});

describe('steps as CSV', () => {
  it('writes a header and one rounded row per step', () => {
    const csv = stepsToCsv([step({}), step({ level: 4, failed: 0, errors: {} })]);
    expect(csv.split('\n')).toEqual([
      'mode,level,seconds,requests,ok,failed,requests_per_s,candidates_per_s,p50_ms,p90_ms,p99_ms,errors',
      'concurrency,2,10,101,100,1,10,29999,180.12,200.5,250.78,504 SCORING_TIMEOUT=1',
      'concurrency,4,10,101,100,0,10,29999,180.12,200.5,250.78,',
      '',
    ]);
  });

  it('leaves a latency empty when nothing succeeded and quotes cells that need it', () => {
    const csv = stepsToCsv([
      step({ ok: 0, p50Ms: NaN, p90Ms: NaN, p99Ms: NaN, errors: { 'a,"b"': 2, ECONNRESET: 1 } }),
    ]);
    expect(csv.split('\n')[1]).toBe(
      'concurrency,2,10,101,0,1,10,29999,,,,"a,""b""=2;ECONNRESET=1"',
    );
  });
});
