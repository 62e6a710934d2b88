import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const repoRoot = resolve(__dirname, '..', '..');

/**
 * The node options an npm script of package.json starts its app with: the `--` arguments between
 * `node` and the entry point of its last command (`nest build x && node --a=1 dist/x.js` gives
 * `['--a=1']`). The benchmarks' launchers (RankerProcess, BatchScorerProcess, which the worker's
 * specs use too) start the apps with these, and the k8s spec checks the manifests against them,
 * so all three run an app the same way.
 */
export function scriptNodeFlags(script: string): string[] {
  const scripts = (
    JSON.parse(readFileSync(resolve(repoRoot, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    }
  ).scripts;
  const text = scripts[script];
  if (text === undefined) throw new Error(`package.json has no script "${script}"`);
  return nodeFlagsOf(text);
}

/**
 * The options of a command line's last command, `node [--options] <entry> [args]`: options of
 * the `--name` or `--name=value` form (a value as a separate word would be taken for the entry).
 */
export function nodeFlagsOf(commandLine: string): string[] {
  const split = splitNodeCommand(commandLine.split('&&').pop()!.trim().split(/\s+/));
  if (split === undefined)
    throw new Error(`"${commandLine}" does not end in "node [options] <entry>"`);
  return split.flags;
}

/**
 * `node [--options] <entry> [args]` as words (a command line's, or a container's exec form), split
 * into the options and the entry point; undefined when it is not of that form.
 */
export function splitNodeCommand(words: string[]): { flags: string[]; entry: string } | undefined {
  const at = words.findIndex((word, i) => i > 0 && !word.startsWith('-'));
  if (words[0] !== 'node' || at < 0) return undefined;
  return { flags: words.slice(1, at), entry: words[at] };
}
