import { ConfigInvalidError, loadTypedConfig } from '@app/common';
import { PipelineConfig } from './pipeline.config';

const load = (env: Record<string, string>) => loadTypedConfig(PipelineConfig, (name) => env[name]);

describe('PipelineConfig', () => {
  it('polls every 5 s, caps bundle files and broadcasts nothing by default', () => {
    const config = load({});
    expect(config.BUNDLES_POLL_INTERVAL_MS).toBe(5000);
    expect(config.bundleLimits).toEqual({
      maxYamlBytes: 1 << 20,
      maxGoldenBytes: 16 << 20,
      maxModelBytes: 1 << 29,
    });
    expect(config.BUNDLES_BROADCAST_REDIS_URL).toBe('');
    expect(config.BUNDLES_BROADCAST_CHANNEL).toBe('ranker:bundles');
    expect(config.RANK_LOOP_SLICE_MS).toBe(2);
  });

  it('takes a loop slice of 0 (off) to 1000 ms', () => {
    expect(load({ RANK_LOOP_SLICE_MS: '0' }).RANK_LOOP_SLICE_MS).toBe(0);
    expect(load({ RANK_LOOP_SLICE_MS: '1000' }).RANK_LOOP_SLICE_MS).toBe(1000);
  });

  it('takes 0 to stop polling, and a broadcast Redis with its channel', () => {
    const config = load({
      BUNDLES_POLL_INTERVAL_MS: '0',
      BUNDLES_BROADCAST_REDIS_URL: 'redis://10.0.0.5:6379/0',
      BUNDLES_BROADCAST_CHANNEL: 'spec-1:bundles',
    });
    expect(config.BUNDLES_POLL_INTERVAL_MS).toBe(0);
    expect(config.BUNDLES_BROADCAST_REDIS_URL).toBe('redis://10.0.0.5:6379/0');
    expect(config.BUNDLES_BROADCAST_CHANNEL).toBe('spec-1:bundles');
  });

  it.each([
    ['BUNDLES_POLL_INTERVAL_MS', '50'],
    ['BUNDLES_POLL_INTERVAL_MS', '-1'],
    ['BUNDLES_POLL_INTERVAL_MS', 'often'],
    ['BUNDLES_MAX_YAML_BYTES', '10'],
    ['BUNDLES_MAX_MODEL_BYTES', '1.5'],
    ['BUNDLES_BROADCAST_REDIS_URL', 'localhost:6379'],
    ['BUNDLES_BROADCAST_CHANNEL', 'has space'],
    ['RANK_LOOP_SLICE_MS', '-1'],
    ['RANK_LOOP_SLICE_MS', '1001'],
    ['RANK_LOOP_SLICE_MS', '2.5'],
    ['RANK_LOOP_SLICE_MS', 'soon'],
  ])('refuses %s=%s, naming it', (name, raw) => {
    expect(() => load({ [name]: raw })).toThrow(ConfigInvalidError);
    expect(() => load({ [name]: raw })).toThrow(new RegExp(`${name}=`));
  });
});
