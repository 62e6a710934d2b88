/**
 * npm run perf -- --url http://host:8080 --scene feed --candidates 3000 --concurrency 1,2,4,8
 *   --duration 10 [--rate 50,100,200] [--features FILE | --random-ids] [--csv F] [--svg F]
 * A perf analyzer for a running ranker, in the spirit of Triton's perf_analyzer: one load step
 * per concurrency (closed loop) or request rate (open loop), a table row per step (throughput,
 * p50/p90/p99 latency, errors by code), optionally CSV and an SVG chart of throughput against
 * p99 latency. Bad arguments exit 2; a ranker that cannot be reached exits 1.
 */
import { writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { resolve } from 'node:path';
import { LoadGenerator } from './load-generator';
import { parsePerfArgs, PerfOptions, USAGE, UsageError } from './perf-args';
import { buildBodies, idsFromFeatureFile, IdPools, randomIdPools } from './request-bodies';
import { StepSummary, levelLabel, summarize, tableHeader, tableRow } from './step-summary';
import { stepsToCsv } from './steps-csv';
import { throughputLatencySvg } from './throughput-chart';

/** Distinct bodies cycled through: enough that caches see varied users and item sets. */
const BODIES = 64;

/** undefined when the ranker says it is ready; a warning when it answers otherwise. */
function reachable(url: string): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const req = get(`${url}/health/ready`, { timeout: 5000 }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve(res.statusCode === 200 ? undefined : `health/ready answered ${res.statusCode}`),
      );
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 5 s')));
    req.on('error', (error: NodeJS.ErrnoException) =>
      reject(new Error(`cannot reach ${url}: ${error.code ?? error.message}`, { cause: error })),
    );
  });
}

function writeOutputs(options: PerfOptions, steps: StepSummary[]): void {
  if (options.csv !== undefined) {
    writeFileSync(options.csv, stepsToCsv(steps));
    console.log(`csv: ${resolve(options.csv)}`);
  }
  if (options.svg !== undefined) {
    const svg = throughputLatencySvg(
      steps.map((s) => ({ label: levelLabel(s.mode, s.level), x: s.candidatesPerS, y: s.p99Ms })),
      {
        title: `${options.scene}: ${options.candidates} candidates/request, ${options.durationS} s per step`,
        xLabel: 'throughput (candidates/s)',
        yLabel: 'p99 latency (ms)',
      },
    );
    writeFileSync(options.svg, svg);
    console.log(`svg: ${resolve(options.svg)}`);
  }
}

async function main(argv: string[]): Promise<number> {
  let options: PerfOptions;
  try {
    options = parsePerfArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`perf: ${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (options.help) {
    console.log(USAGE);
    return 0;
  }
  const pools: IdPools =
    options.features === undefined ? randomIdPools() : await idsFromFeatureFile(options.features);
  const bodies = buildBodies(pools, {
    candidates: options.candidates,
    count: BODIES,
    topK: options.topK,
  });
  const warning = await reachable(options.url);
  if (warning !== undefined) console.warn(`perf: warning: ${warning}`);

  const load = new LoadGenerator({
    url: `${options.url}/v1/scenes/${encodeURIComponent(options.scene)}/rank`,
    bodies,
    timeoutMs: options.timeoutMs,
  });
  const source = options.features ?? 'random ids';
  console.log(
    `perf: ${options.url} scene ${options.scene}, ${options.candidates} candidates/request, ` +
      `${options.durationS} s per step, ids from ${source}`,
  );
  const steps: StepSummary[] = [];
  try {
    if (options.warmupS > 0)
      await load.run({ mode: options.mode, level: options.levels[0], seconds: options.warmupS });
    console.log(tableHeader(options.mode));
    for (const level of options.levels) {
      const result = await load.run({ mode: options.mode, level, seconds: options.durationS });
      const summary = summarize(result, options.candidates);
      steps.push(summary);
      console.log(tableRow(summary));
    }
  } finally {
    load.close();
  }
  writeOutputs(options, steps);
  // A run where nothing succeeded measured nothing: say so in the exit code.
  return steps.some((s) => s.ok > 0) ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (error: Error) => {
    console.error(`perf: ${error.message}`);
    process.exitCode = 1;
  },
);
