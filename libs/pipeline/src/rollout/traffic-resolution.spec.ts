import { TrafficConfig } from './traffic-config';
import { TrafficFile } from './traffic-file';
import { resolveTraffic, TrafficResolution } from './traffic-resolution';
import { TrafficOverrideState } from './traffic-store';

const VERSIONS = ['v1', 'v2', 'v3'];
const split = (stable: string, canary?: string): TrafficConfig => ({
  stable,
  experiments: [],
  ...(canary && {
    canary: {
      version: canary,
      percent: 10,
      guardrail: { window: 60, minRequests: 10, minErrors: 1, maxErrorRateDelta: 0.1 },
    },
  }),
});
const file = (config: TrafficConfig | undefined, digest = 'd1'): TrafficFile => ({
  path: 'models/feed/traffic.yaml',
  digest,
  errors: config ? [] : [{ path: 'stable', message: 'bad' }],
  ...(config && { config }),
});
const override = (config: unknown, revision = 3, fileDigest?: string): TrafficOverrideState => ({
  revision,
  override: {
    scene: 'feed',
    revision,
    config,
    by: 'ana',
    at: '2026-01-01T00:00:00.000Z',
    ...(fileDigest && { fileDigest }),
  },
});
const resolve = (input: Partial<Parameters<typeof resolveTraffic>[0]>) =>
  resolveTraffic({ versions: VERSIONS, newest: 'v3', ...input });

describe('resolveTraffic', () => {
  it('serves the newest version to everyone when there is neither file nor override', () => {
    expect(resolve({})).toEqual({
      config: { stable: 'v3', experiments: [] },
      source: 'default',
      revision: 0,
      kept: false,
      problems: [],
      fileChangedSinceOverride: false,
    });
  });

  it('serves traffic.yaml when there is no override', () => {
    expect(resolve({ file: file(split('v1', 'v2')) })).toMatchObject({
      config: split('v1', 'v2'),
      source: 'file',
    });
  });

  it('lets the override win over the file until it is cleared, and says when the file moved', () => {
    const set = override(split('v2'), 4, 'd1');
    expect(resolve({ file: file(split('v1', 'v2'), 'd1'), override: set })).toMatchObject({
      config: split('v2'),
      source: 'override',
      revision: 4,
      fileChangedSinceOverride: false,
    });
    // The team edits traffic.yaml: the override still wins, and the admin API can say so.
    expect(resolve({ file: file(split('v3'), 'd2'), override: set })).toMatchObject({
      config: split('v2'),
      source: 'override',
      fileChangedSinceOverride: true,
    });
    expect(resolve({ override: set }).fileChangedSinceOverride).toBe(true); // file removed
    // Cleared (the revision moved on, no override): the file is in force again.
    expect(resolve({ file: file(split('v3'), 'd2'), override: { revision: 5 } })).toMatchObject({
      config: split('v3'),
      source: 'file',
      revision: 5,
      fileChangedSinceOverride: false,
    });
  });

  it('keeps what served when the file turns invalid, and reports why', () => {
    const previous = resolve({ file: file(split('v1', 'v2')) });
    const next = resolve({ file: file(undefined, 'd2'), previous });
    expect(next).toMatchObject({ config: split('v1', 'v2'), source: 'file', kept: true });
    expect(next.problems).toEqual([
      { source: 'file', errors: [{ path: 'stable', message: 'bad' }] },
    ]);
    // At boot there is nothing before: the default serves.
    expect(resolve({ file: file(undefined) })).toMatchObject({
      source: 'default',
      kept: false,
      problems: [{ source: 'file' }],
    });
  });

  it('keeps what served when the override is unreadable or names a version that is gone', () => {
    const previous = resolve({ override: override(split('v2')) });
    const unreadable: TrafficOverrideState = {
      revision: 6,
      errors: [{ path: 'override', message: 'is not JSON' }],
    };
    expect(resolve({ file: file(split('v1')), override: unreadable, previous })).toMatchObject({
      config: split('v2'),
      source: 'override',
      kept: true,
      problems: [{ source: 'override', errors: [{ message: 'is not JSON' }] }],
    });
    const gone = resolve({ override: override(split('v9')), file: file(split('v1')), previous });
    expect(gone).toMatchObject({ config: split('v2'), kept: true });
    expect(gone.problems[0].errors[0].message).toMatch(/'v9' is not a version of this scene/);
  });

  it('falls to the next valid source when what served names a version that is gone too', () => {
    const previous: TrafficResolution = resolve({ override: override(split('v1', 'v2')) });
    const without = ['v1', 'v3']; // v2 was removed
    const next = resolveTraffic({
      versions: without,
      newest: 'v3',
      override: override(split('v1', 'v2')),
      file: file(split('v1')),
      previous,
    });
    expect(next).toMatchObject({ config: split('v1'), source: 'file', kept: false });
    expect(next.problems.map((p) => p.source)).toEqual(['override']);
  });

  it('reports a file that was valid but names a version that is gone', () => {
    const next = resolveTraffic({ versions: ['v1'], newest: 'v1', file: file(split('v1', 'v2')) });
    expect(next).toMatchObject({ source: 'default', config: split('v1') });
    expect(next.problems[0]).toMatchObject({
      source: 'file',
      errors: [{ path: 'canary.version' }],
    });
  });
});
