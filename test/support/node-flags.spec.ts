import { nodeFlagsOf, scriptNodeFlags, splitNodeCommand } from './node-flags';

describe('nodeFlagsOf', () => {
  it("takes the options between node and the entry point of the line's last command", () => {
    expect(nodeFlagsOf('nest build x && node --a=1 --b dist/x.js')).toEqual(['--a=1', '--b']);
    expect(nodeFlagsOf('node dist/x.js --not-a-node-option')).toEqual([]);
    expect(nodeFlagsOf('  node   dist/x.js')).toEqual([]);
  });

  it('refuses a line whose last command is not node with an entry point', () => {
    expect(() => nodeFlagsOf('node --a=1')).toThrow('does not end in');
    expect(() => nodeFlagsOf('node dist/x.js && jest')).toThrow('does not end in');
  });
});

describe('scriptNodeFlags', () => {
  it("reads package.json's start scripts", () => {
    expect(scriptNodeFlags('start')).toEqual([]);
    expect(scriptNodeFlags('start:batch-scorer')).toEqual(['--max-semi-space-size=64']);
    expect(() => scriptNodeFlags('no-such-script')).toThrow('no script "no-such-script"');
  });
});

describe('splitNodeCommand', () => {
  it('splits exec-form words into the options and the entry point', () => {
    expect(splitNodeCommand(['node', '--a=1', 'dist/x.js', '--b'])).toEqual({
      flags: ['--a=1'],
      entry: 'dist/x.js',
    });
    expect(splitNodeCommand(['node', '--a=1'])).toBeUndefined();
    expect(splitNodeCommand(['sh', '-c', 'node x.js'])).toBeUndefined();
  });
});
