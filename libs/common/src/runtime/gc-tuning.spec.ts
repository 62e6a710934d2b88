import { spawnSync } from 'node:child_process';
import * as v8 from 'node:v8';
import { GC_TUNING_FLAGS, tuneGarbageCollector } from './gc-tuning';

jest.mock('node:v8', () => ({ setFlagsFromString: jest.fn() }));

/**
 * Allocates objects that survive (so V8 would learn to pretenure their allocation site) in a bare
 * child process, after setting `flags` at run time as tuneGarbageCollector does; its stdout holds
 * V8's pretenuring statistics (`--trace-pretenuring-statistics`), printed at each collection
 * while pretenuring is on.
 */
function pretenuringTrace(flags: readonly string[]): string {
  const script = `
    for (const flag of ${JSON.stringify(flags)}) require('node:v8').setFlagsFromString(flag);
    const keep = [];
    for (let i = 0; i < 200000; i++) keep.push({ i });
    gc();`;
  const run = spawnSync(
    process.execPath,
    ['--expose-gc', '--trace-pretenuring-statistics', '-e', script],
    { encoding: 'utf8' },
  );
  expect(run.status).toBe(0);
  return run.stdout;
}

describe('tuneGarbageCollector', () => {
  it('sets each of its flags', () => {
    tuneGarbageCollector();
    expect(jest.mocked(v8.setFlagsFromString).mock.calls).toEqual(
      GC_TUNING_FLAGS.map((flag) => [flag]),
    );
    expect(GC_TUNING_FLAGS).toEqual([
      '--no-allocation-site-pretenuring',
      '--heap-growing-percent=100',
    ]);
  });

  it('takes effect when set in a running process (V8 reads these flags as it collects)', () => {
    expect(pretenuringTrace([])).toMatch(/pretenuring: AllocationSite/);
    expect(pretenuringTrace(GC_TUNING_FLAGS)).not.toMatch(/pretenuring/);
  });
});
