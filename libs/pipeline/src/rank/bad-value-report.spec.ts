import { Registry } from 'prom-client';
import { PipelineMetrics } from '../pipeline.metrics';
import { badValueReport } from './bad-value-report';

describe('badValueReport', () => {
  const labels = { scene: 'feed', version: 'v1' };
  const request = { requestId: 'r-1', userId: 'u9', itemIds: ['i1', 'i2'] };

  async function counts(metrics: PipelineMetrics) {
    const { values } = await metrics.badValues.get();
    return values.map((v) => [v.labels, v.value]);
  }

  it('counts each bad value once per request, by scene, version and source, as wrong_type', async () => {
    const metrics = new PipelineMetrics(new Registry());
    const lines: string[] = [];
    const report = badValueReport(metrics, { warn: (m) => lines.push(m) }, labels, request);
    report('context', 'request', 0, 'hour');
    report('context', 'request', 0, 'hour'); // the same value read by another column
    report('item', 'request', 1, 'price');
    report('item', 'stored', 1, 'price');
    report('user', 'request', 0, 'age');
    expect(await counts(metrics)).toEqual([
      [{ ...labels, source: 'context', reason: 'wrong_type' }, 1],
      [{ ...labels, source: 'item', reason: 'wrong_type' }, 2],
      [{ ...labels, source: 'user', reason: 'wrong_type' }, 1],
    ]);
    expect(lines).toHaveLength(4);
    expect(lines[1]).toContain('requestId=r-1');
    expect(lines[1]).toContain('request item i2 feature price');
    expect(lines[1]).toContain('stored value or default used');
    expect(lines[2]).toContain('stored item i2 feature price');
    expect(lines[3]).toContain('request user u9 feature age');
  });

  it('starts afresh for the next request', async () => {
    const metrics = new PipelineMetrics(new Registry());
    const warn = () => undefined;
    badValueReport(metrics, { warn }, labels, request)('context', 'request', 0, 'hour');
    badValueReport(metrics, { warn }, labels, request)('context', 'request', 0, 'hour');
    expect(await counts(metrics)).toEqual([
      [{ ...labels, source: 'context', reason: 'wrong_type' }, 2],
    ]);
  });
});
