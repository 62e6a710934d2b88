/**
 * Command line of `npm run perf`: parsed and checked in full before any request leaves, so a
 * typo never turns into a minute of load against the wrong thing. Pure: argv in, options out.
 */
import type { LoadMode } from './load-generator';

export interface PerfOptions {
  url: string;
  scene: string;
  candidates: number;
  mode: LoadMode;
  levels: number[];
  durationS: number;
  warmupS: number;
  /** Feature file the ids come from, or undefined with `randomIds`. */
  features?: string;
  randomIds: boolean;
  csv?: string;
  svg?: string;
  timeoutMs: number;
  topK?: number;
  help: boolean;
}

export class UsageError extends Error {}

export const USAGE = `usage: npm run perf -- --url URL [options]
  --url URL            ranker base URL, e.g. http://127.0.0.1:8080 (required)
  --scene NAME         scene to rank (default feed)
  --candidates N       candidates per request (default 100)
  --concurrency LIST   closed loop: callers per step, e.g. 1,2,4,8 (default 1)
  --rate LIST          open loop: requests/s per step, e.g. 50,100,200 (instead of --concurrency)
  --duration S         seconds per step (default 10)
  --warmup S           seconds of load before the first step, not measured (default 2; 0: none)
  --features FILE      JSON-lines feature file the user and item ids come from
                       (default models/demo/features.jsonl)
  --random-ids         random user and item ids instead (features fall back to defaults)
  --top-k N            topK of each request (default: the bundle's)
  --timeout-ms N       per-request timeout (default 30000)
  --csv FILE           write one CSV row per step
  --svg FILE           draw throughput against p99 latency as an SVG chart
  --help               this text`;

const VALUE_FLAGS = new Set([
  '--url',
  '--scene',
  '--candidates',
  '--concurrency',
  '--rate',
  '--duration',
  '--warmup',
  '--features',
  '--top-k',
  '--timeout-ms',
  '--csv',
  '--svg',
]);
const SWITCHES = new Set(['--random-ids', '--help']);

function positiveInt(flag: string, text: string, max: number): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > max)
    throw new UsageError(`${flag} must be an integer from 1 to ${max}, got "${text}"`);
  return n;
}

function seconds(flag: string, text: string, allowZero: boolean): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < 0 || (n === 0 && !allowZero) || n > 3600)
    throw new UsageError(
      `${flag} must be a number of seconds ${allowZero ? 'from 0' : 'above 0'} up to 3600, got "${text}"`,
    );
  return n;
}

function levels(flag: string, text: string, max: number): number[] {
  const list = text.split(',').map((part) => positiveInt(flag, part.trim(), max));
  if (new Set(list).size !== list.length)
    throw new UsageError(`${flag} lists a value twice: "${text}"`);
  return list;
}

export function parsePerfArgs(argv: readonly string[]): PerfOptions {
  const values = new Map<string, string>();
  const switches = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const eq = arg.indexOf('=');
    const flag = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    if (SWITCHES.has(flag)) {
      if (eq > 0) throw new UsageError(`${flag} takes no value`);
      switches.add(flag);
      continue;
    }
    if (!VALUE_FLAGS.has(flag))
      throw new UsageError(
        arg.startsWith('-') ? `unknown option ${flag}` : `unexpected argument "${arg}"`,
      );
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || (eq < 0 && value.startsWith('--')))
      throw new UsageError(`${flag} needs a value`);
    if (values.has(flag)) throw new UsageError(`${flag} given twice`);
    values.set(flag, value);
  }
  const help = switches.has('--help');
  if (help) return { ...defaults(), help };

  const url = values.get('--url');
  if (url === undefined) throw new UsageError('--url is required');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--url must be an http:// URL, got "${url}"`);
  }
  if (parsed.protocol !== 'http:')
    throw new UsageError(`--url must be an http:// URL, got "${url}"`);
  if (values.has('--concurrency') && values.has('--rate'))
    throw new UsageError('give --concurrency or --rate, not both');
  if (values.has('--features') && switches.has('--random-ids'))
    throw new UsageError('give --features or --random-ids, not both');
  const scene = values.get('--scene') ?? 'feed';
  if (!/^[\w.-]+$/.test(scene))
    throw new UsageError(`--scene may only contain letters, digits, _ . -, got "${scene}"`);

  const rate = values.get('--rate');
  const randomIds = switches.has('--random-ids');
  return {
    url: url.replace(/\/+$/, ''),
    scene,
    candidates: positiveInt('--candidates', values.get('--candidates') ?? '100', 100_000),
    mode: rate === undefined ? 'concurrency' : 'rate',
    levels:
      rate === undefined
        ? levels('--concurrency', values.get('--concurrency') ?? '1', 4096)
        : levels('--rate', rate, 1_000_000),
    durationS: seconds('--duration', values.get('--duration') ?? '10', false),
    warmupS: seconds('--warmup', values.get('--warmup') ?? '2', true),
    features: randomIds ? undefined : (values.get('--features') ?? 'models/demo/features.jsonl'),
    randomIds,
    csv: values.get('--csv'),
    svg: values.get('--svg'),
    timeoutMs: positiveInt('--timeout-ms', values.get('--timeout-ms') ?? '30000', 600_000),
    topK: values.has('--top-k')
      ? positiveInt('--top-k', values.get('--top-k')!, 100_000)
      : undefined,
    help,
  };
}

function defaults(): PerfOptions {
  return {
    url: '',
    scene: 'feed',
    candidates: 100,
    mode: 'concurrency',
    levels: [1],
    durationS: 10,
    warmupS: 2,
    features: 'models/demo/features.jsonl',
    randomIds: false,
    timeoutMs: 30_000,
    help: false,
  };
}
