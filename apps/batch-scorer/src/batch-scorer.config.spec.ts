import { ConfigInvalidError, loadTypedConfig } from '@app/common';
import { BatchScorerConfig } from './batch-scorer.config';

const load = (vars: Record<string, string>) =>
  loadTypedConfig(BatchScorerConfig, (name) => vars[name]);

describe('BatchScorerConfig', () => {
  it('has working defaults', () => {
    const config = load({});
    expect(config.BATCH_INPUT_TOPIC).toBe('ranker.rank.requests');
    expect(config.BATCH_RESUME_AT_QUEUE_FILL).toBeLessThan(config.BATCH_PAUSE_AT_QUEUE_FILL);
  });

  it.each([
    [{ BATCH_MAX_IN_FLIGHT: '0' }, /^BATCH_MAX_IN_FLIGHT=0: /],
    [{ BATCH_METRICS_PORT: 'http' }, /^BATCH_METRICS_PORT="http": expected a number/],
    [{ BATCH_OUTPUT_TOPIC: ' ' }, /^BATCH_OUTPUT_TOPIC=" ": /],
    [
      { BATCH_PAUSE_AT_QUEUE_FILL: '0.5', BATCH_RESUME_AT_QUEUE_FILL: '0.6' },
      /^BATCH_RESUME_AT_QUEUE_FILL=0\.6: BATCH_RESUME_AT_QUEUE_FILL must be less than BATCH_PAUSE_AT_QUEUE_FILL \(0\.5\)/,
    ],
  ])('refuses %p naming the variable', (vars, message) => {
    let error: unknown;
    try {
      load(vars);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigInvalidError);
    expect((error as ConfigInvalidError).details[0].message).toMatch(message);
  });
});
