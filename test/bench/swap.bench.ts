/**
 * npm run bench:swap — a bundle swap under steady load, over HTTP. The real ranker runs as a child
 * process on a temp BUNDLES_DIR holding a copy of the example bundle as `feed/v1` (in-memory demo
 * features, BUNDLES_POLL_INTERVAL_MS from BENCH_POLL_MS, default 250). This process sends
 * 100-candidate requests on a fixed schedule (open loop, BENCH_RATE per second, default 200;
 * latency counted from the scheduled time, so a stall shows) and, each round (BENCH_ROUNDS,
 * default 3), after BENCH_SECONDS (default 10) of steady load:
 * 1. drops `v<r+1>` (a copy of v1) into place the way the README tells teams to (built
 *    beforehand under a hidden name, READY written last, renamed in): the swap window runs from
 *    the rename until the old version's models are released (read from the admin API);
 * 2. after another BENCH_SECONDS, withdraws that version again (renamed out of sight): the
 *    ranker loads v1 again and swaps back; window as above;
 * then BENCH_SECONDS more of steady load. Steady latencies are those outside every swap window.
 * swap_ms is from the rename (or removal) to the first answer naming the new version, for a
 * request sent after it. Each window is also paired with the 3 s of steady load just before it
 * (paired_ratios), which machine drift between distant phases does not move. The pooled ratio is
 * also drawn PLACEBO_DRAWS times over windows as long placed in the steady load (placebo_*, see
 * placebo-windows.ts): what the statistic reads on this machine with no swap. Prints each window, the targets with PASS/FAIL, then one JSON line; it
 * reports a miss, it does not fail on one.
 *
 * The npm script runs this process with `--initial-old-space-size=512 --no-memory-reducer`, so
 * its own heap (~40 MB, growing by the answers it keeps) sees no full collection during a run.
 * Without them it ran 3-4 in a 1-round run, each ~30 ms of marking on V8's platform threads at
 * nice 0 plus a pause: traced with `perf` (sched_switch), one took 56 ms of the two cores within
 * 70 ms, above the ranker's model threads at nice 10, and the requests of those 70 ms waited
 * (RESULTS.md: bench:swap, 2026-12-08). A client elsewhere would not collect on the ranker's
 * cores.
 */
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { HEAD_OF_BODY_BYTES, KeepBody } from '../tools/perf/keep-alive-client';
import { LoadGenerator } from '../tools/perf/load-generator';
import { buildBodies, idsFromFeatureFile } from '../tools/perf/request-bodies';
import { formatErrors, percentile } from '../tools/perf/step-summary';
import { stageVersion, StagedVersion, writeVersion } from '../support/bundle-versions';
import { RankerProcess } from './ranker-process';
import { placeboRatios, summarizePlacebo } from './placebo-windows';
import { fixed, median, roundsFromEnv, secondsFromEnv } from './rounds';

const repoRoot = resolve(__dirname, '..', '..');
const FEATURES = join(repoRoot, 'models/demo/features.jsonl');
const SECONDS = secondsFromEnv('BENCH_SECONDS', 10);
const ROUNDS = roundsFromEnv();
const RATE = Number(process.env.BENCH_RATE ?? 200);
const POLL_MS = Number(process.env.BENCH_POLL_MS ?? 250);
/** BENCH_TRACE=<file>: writes the trace (writeTrace), and the admin API is polled in each window. */
const TRACE = process.env.BENCH_TRACE || undefined;
const CANDIDATES = 100;
const TOKEN = `bench-swap-${process.pid}-${Date.now()}-token`;
const TARGET_RATIO = 1.5;
/** Placebo draws (see placebo-windows.ts): the pooled ratio's own spread with no swap. */
const PLACEBO_DRAWS = 500;
/** The steady stretch each swap window is paired with: this long, just before the change. */
const PAIRED_MS = 3000;
/**
 * The built app, as `npm start` runs it (the npm script builds it first): a swap starts new model
 * workers, and from sources each would first load swc and compile its TypeScript (~0.25 s of CPU
 * per worker here, ~0.04 s built), which production never pays. BENCH_FROM_SOURCE=1 runs the
 * sources instead.
 */
const ENTRY =
  process.env.BENCH_FROM_SOURCE === '1'
    ? 'apps/ranker/src/main.ts'
    : 'dist/apps/ranker/src/main.js';

/** One scheduled request: latency from its scheduled time; the version that answered it. */
interface Sent {
  due: number;
  /** When the sender actually wrote it: past `due` when the benchmark's own process was late. */
  start: number;
  end: number;
  status: number;
  version?: string;
  error?: string;
}

interface SwapWindow {
  name: string;
  /** performance.now() of the rename or removal. */
  from: number;
  /** First answer naming the new version (for a request sent after `from`). */
  servingAt: number;
  /** The old version's models were released. */
  to: number;
  eventLoopP99Ms: number;
  eventLoopMaxMs: number;
  /**
   * With BENCH_TRACE only: the versions' states as the admin API listed them through the window
   * (polled every 5 ms), each change with the performance.now() of the poll that saw it.
   */
  states: { at: number; versions: string }[];
}

const VERSION = /"version":"([^"]*)"/;
/** BENCH_KEEP=always keeps every answer's whole body (the default before 2026-12-07 night). */
const KEEP: KeepBody = process.env.BENCH_KEEP === 'always' ? 'always' : 'head';

/** Open loop: a request every 1000/RATE ms whatever the answers, until stopped. */
class ScheduledLoad {
  readonly sent: Sent[] = [];
  private stopped = false;
  private readonly pending = new Set<Promise<void>>();
  private running: Promise<void> | undefined;

  constructor(
    private readonly load: LoadGenerator,
    private readonly bodies: Buffer[],
  ) {}

  start(): void {
    this.running = this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
    await Promise.all(this.pending);
  }

  /**
   * The first answer from `version` to a request scheduled at or after `since`. Each poll reads
   * only the answers recorded since the last one: this runs every 5 ms inside a swap window, on
   * the cores the ranker uses, and rereading every answer of the run each time cost the window
   * more as the run went on (~14,000 by its end).
   */
  async firstAnswer(version: string, since: number, withinMs = 120_000): Promise<number> {
    let first = Infinity;
    let read = 0;
    for (const end = since + withinMs; performance.now() < end; await sleep(5)) {
      for (; read < this.sent.length; read++) {
        const s = this.sent[read];
        if (s.due >= since && s.version === version) first = Math.min(first, s.end);
      }
      if (first < Infinity) return first;
    }
    throw new Error(`no answer from ${version} within ${withinMs} ms`);
  }

  private async loop(): Promise<void> {
    const interval = 1000 / RATE;
    const start = performance.now();
    for (let i = 0; !this.stopped; i++) {
      const due = start + i * interval;
      const wait = due - performance.now();
      if (wait > 1) await sleep(wait);
      const body = this.bodies[i % this.bodies.length];
      const sending = this.send(due, body).finally(() => this.pending.delete(sending));
      this.pending.add(sending);
    }
  }

  private async send(due: number, body: Buffer): Promise<void> {
    const start = performance.now();
    try {
      const answer = await this.load.send(body, KEEP);
      const end = performance.now();
      if (answer.status === 200) {
        const version = VERSION.exec(answer.body.toString('latin1', 0, HEAD_OF_BODY_BYTES))?.[1];
        this.sent.push({ due, start, end, status: 200, version });
      } else {
        this.sent.push({
          due,
          start,
          end,
          status: answer.status,
          error: answer.body.toString().slice(0, 200),
        });
      }
    } catch (error) {
      this.sent.push({
        due,
        start,
        end: performance.now(),
        status: 0,
        error: (error as Error).message,
      });
    }
  }
}

async function adminVersions(ranker: RankerProcess): Promise<{ version: string; state: string }[]> {
  const response = await fetch(`${ranker.baseUrl}/v1/admin/scenes/feed`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  if (response.status !== 200) throw new Error(`admin API answered ${response.status}`);
  return ((await response.json()) as { versions: { version: string; state: string }[] }).versions;
}

/**
 * For `ms`, every 20 ms: the readiness and liveness probes and a metrics scrape (what Kubernetes
 * and Prometheus send a ranker all along) and the admin listing this benchmark polls in each swap
 * window. Sent in the warm-up: without them the first window was the first time the ranker's
 * HTTP stack met GET requests at all, and the deoptimizations that cost (about 40 in Node's HTTP
 * and stream code, Fastify and Nest, with --log-deopt) fell into that window, a cost of the
 * benchmark's own polling that a ranker serving probes never pays at a swap.
 */
async function sideRequests(ranker: RankerProcess, ms: number): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(20)) {
    await adminVersions(ranker);
    for (const path of ['/health/ready', '/health/live', '/metrics']) {
      const response = await fetch(`${ranker.baseUrl}${path}`);
      if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
      await response.arrayBuffer();
    }
  }
}

/** Runs `change` and measures the swap it causes until `old` is released. */
async function swap(
  name: string,
  ranker: RankerProcess,
  load: ScheduledLoad,
  change: () => Promise<void>,
  from: string,
  to: string,
): Promise<SwapWindow> {
  await ranker.probe('mark');
  await change();
  const changedAt = performance.now();
  const states: SwapWindow['states'] = [];
  let watching = TRACE !== undefined;
  const watcher = (async () => {
    while (watching) {
      const at = performance.now();
      const versions = (await adminVersions(ranker))
        .map((r) => `${r.version}:${r.state}`)
        .join(' ');
      if (states.at(-1)?.versions !== versions) states.push({ at, versions });
      await sleep(5);
    }
  })();
  const servingAt = await load.firstAnswer(to, changedAt);
  // Released: no load of `from` is draining or serving any more.
  for (const end = Date.now() + 120_000; ; await sleep(20)) {
    const rows = await adminVersions(ranker);
    if (!rows.some((r) => r.version === from && ['serving', 'draining'].includes(r.state))) break;
    if (Date.now() > end) throw new Error(`${from} was never released: ${JSON.stringify(rows)}`);
  }
  const to_ = performance.now();
  watching = false;
  await watcher;
  const inside = await ranker.probe('read');
  return {
    name,
    from: changedAt,
    servingAt,
    to: to_,
    eventLoopP99Ms: inside.loopP99Ms,
    eventLoopMaxMs: inside.loopMaxMs,
    states,
  };
}

/**
 * BENCH_TRACE=<file>: every request (ms from the first; `send_lag_ms`: when it was written against
 * its schedule, so a slow answer can be told from a late send), each window, and the versions'
 * states the admin API listed in it (a row per change, `version:state` pairs space-separated), as
 * CSV.
 */
async function writeTrace(file: string, sent: readonly Sent[], windows: SwapWindow[]) {
  const t0 = sent[0]?.due ?? 0;
  const ms = (t: number) => (t - t0).toFixed(1);
  const lines = ['kind,start_ms,end_ms,latency_ms,status,version,send_lag_ms'];
  for (const s of sent)
    lines.push(
      `request,${ms(s.due)},${ms(s.end)},${(s.end - s.due).toFixed(1)},${s.status},${s.version ?? ''},${(s.start - s.due).toFixed(1)}`,
    );
  for (const w of windows) {
    lines.push(`swap,${ms(w.from)},${ms(w.to)},,,${w.name}`);
    for (const { at, versions } of w.states) lines.push(`state,${ms(at)},,,,${versions}`);
  }
  await writeFile(file, `${lines.join('\n')}\n`);
  console.log(`trace: ${file}`);
}

function p99(sent: readonly Sent[]): number {
  const sorted = Float64Array.from(
    sent.filter((s) => s.status === 200).map((s) => s.end - s.due),
  ).sort();
  return percentile(sorted, 99);
}

/** The heap flags this process runs with (see the file's comment). */
function senderHeapFlags(): string {
  return process.execArgv
    .filter((a) => /^--(initial-old-space-size|no-memory-reducer)\b/.test(a))
    .join(' ');
}

async function main(): Promise<void> {
  Logger.overrideLogger(['error']);
  if (!(RATE > 0 && RATE <= 10_000)) throw new Error(`BENCH_RATE must be 1-10000, got ${RATE}`);
  const root = await mkdtemp(join(tmpdir(), 'ranker-bench-swap-'));
  await writeVersion(root, 'feed', 'v1');
  console.log(
    `bench:swap on ${availableParallelism()} cores: ${RATE} requests/s of ${CANDIDATES} candidates, ` +
      `${ROUNDS} round(s) (a swap there and back each), ${SECONDS} s steady between swaps, ` +
      `BUNDLES_DIR ${root} polled every ${POLL_MS} ms, ranker from ${ENTRY}` +
      `, sender's heap flags: ${senderHeapFlags() || 'none (full collections of its own may fall in the run)'}`,
  );
  let ranker: RankerProcess | undefined;
  let generator: LoadGenerator | undefined;
  try {
    ranker = await RankerProcess.start(
      { BUNDLES_DIR: root, BUNDLES_POLL_INTERVAL_MS: String(POLL_MS), RANKER_ADMIN_TOKEN: TOKEN },
      90_000,
      ENTRY,
    );
    const url = `${ranker.baseUrl}/v1/scenes/feed/rank`;
    const bodies = buildBodies(await idsFromFeatureFile(FEATURES), {
      candidates: CANDIDATES,
      count: 512,
      seed: 3,
    });
    generator = new LoadGenerator({ url, bodies });
    // Warm-up: three seconds of the load itself, not measured, and beside it the GETs a ranker in
    // production serves all along (see sideRequests).
    const warm = new ScheduledLoad(generator, bodies);
    warm.start();
    await sideRequests(ranker, 3000);
    await warm.stop();

    // Every version is built beforehand under a hidden name: a swap is one rename, so the
    // copying never competes with the measured load.
    const staged: StagedVersion[] = [];
    for (let round = 1; round <= ROUNDS; round++)
      staged.push(await stageVersion(root, 'feed', `v${round + 1}`));
    const load = new ScheduledLoad(generator, bodies);
    const windows: SwapWindow[] = [];
    load.start();
    for (let round = 1; round <= ROUNDS; round++) {
      const version = `v${round + 1}`;
      const dir = staged[round - 1].dir;
      const removed = join(root, 'feed', `.${version}.removed`);
      await sleep(SECONDS * 1000);
      windows.push(
        await swap(
          `round ${round}: v1 -> ${version} (dropped)`,
          ranker,
          load,
          staged[round - 1].publish,
          'v1',
          version,
        ),
      );
      await sleep(SECONDS * 1000);
      // Withdrawn as the README says: renamed out of sight at once, deleted at leisure.
      windows.push(
        await swap(
          `round ${round}: ${version} -> v1 (${version} removed)`,
          ranker,
          load,
          () => rename(dir, removed),
          version,
          'v1',
        ),
      );
      await rm(removed, { recursive: true });
    }
    await sleep(SECONDS * 1000);
    await load.stop();
    if (TRACE) await writeTrace(TRACE, load.sent, windows);

    const inside = (w: SwapWindow) => load.sent.filter((s) => s.end >= w.from && s.due <= w.to);
    const inWindow = (s: Sent) => windows.some((w) => s.end >= w.from && s.due <= w.to);
    const during = load.sent.filter(inWindow);
    const steady = load.sent.filter((s) => !inWindow(s));
    const failed = load.sent.filter((s) => s.status !== 200);
    const errors: Record<string, number> = {};
    for (const f of failed) {
      const key = `${f.status} ${f.error ?? ''}`.trim();
      errors[key] = (errors[key] ?? 0) + 1;
    }
    const windowP99s = windows.map((w) => p99(inside(w)));
    // Each window against the steady seconds just before it, as the house's interleaved rounds
    // pair phases: machine drift between distant phases cancels out.
    const beforeP99s = windows.map((w) =>
      p99(load.sent.filter((s) => s.due >= w.from - PAIRED_MS && s.end < w.from)),
    );
    const pairedRatios = windows.map((_, i) => windowP99s[i] / beforeP99s[i]);
    windows.forEach((w, i) => {
      const ms = (t: number) => Math.round(t).toString().padStart(5);
      console.log(
        `  ${w.name.padEnd(34)} swap ${ms(w.servingAt - w.from)} ms, window ${ms(w.to - w.from)} ms, ` +
          `${inside(w).length} requests, p99 ${windowP99s[i].toFixed(1)} ms, ranker event loop ` +
          `p99 ${w.eventLoopP99Ms.toFixed(1)} ms max ${w.eventLoopMaxMs.toFixed(1)} ms`,
      );
    });
    const steadyP99 = p99(steady);
    const duringP99 = p99(during);
    const swaps = windows.map((w) => Math.round(w.servingAt - w.from));
    const placebo = summarizePlacebo(
      placeboRatios(
        load.sent.map((s) => ({ due: s.due, end: s.end, ok: s.status === 200 })),
        windows,
        { draws: PLACEBO_DRAWS, seed: 1, steadyP99 },
      ),
      duringP99 / steadyP99,
    );
    const report = {
      cores: availableParallelism(),
      rate_per_s: RATE,
      candidates: CANDIDATES,
      poll_ms: POLL_MS,
      ranker: ENTRY,
      rounds: ROUNDS,
      requests: load.sent.length,
      failed: failed.length,
      errors,
      p99_steady_ms: fixed(steadyP99, 1),
      p99_during_swap_ms: fixed(duringP99, 1),
      // Each window's own p99 and their median: one window disturbed by another process on the
      // machine moves the pooled figure above, not this one.
      p99_by_swap_ms: windowP99s.map((v) => fixed(v, 1)),
      p99_during_swap_median_ms: fixed(median(windowP99s), 1),
      p99_ratio: fixed(duringP99 / steadyP99, 2),
      p99_before_swap_ms: beforeP99s.map((v) => fixed(v, 1)),
      paired_ratios: pairedRatios.map((v) => fixed(v, 2)),
      paired_ratio_median: fixed(median(pairedRatios), 2),
      p50_steady_ms: fixed(
        percentile(Float64Array.from(steady.map((s) => s.end - s.due)).sort(), 50),
        1,
      ),
      swap_ms: swaps[0],
      swap_back_ms: swaps[1],
      swaps_ms: swaps,
      windows_ms: windows.map((w) => Math.round(w.to - w.from)),
      requests_during_swaps: during.length,
      // The pooled ratio over windows of the same lengths placed in steady load (no swap).
      placebo_ratio_median: fixed(placebo.median, 2),
      placebo_ratio_p90: fixed(placebo.p90, 2),
      placebo_at_or_above: fixed(placebo.atOrAbove, 3),
    };
    console.log(`\ntargets:`);
    console.log(`  failed == 0: ${report.failed} ${report.failed === 0 ? 'PASS' : 'FAIL'}`);
    const ratioPass = duringP99 <= TARGET_RATIO * steadyP99;
    console.log(
      `  p99_during_swap_ms <= ${TARGET_RATIO} x p99_steady_ms: ${report.p99_during_swap_ms} vs ` +
        `${fixed(TARGET_RATIO * steadyP99, 1)} ${ratioPass ? 'PASS' : 'FAIL'}`,
    );
    console.log(
      `  (each swap against the ${PAIRED_MS / 1000} s before it: p99 ratios ` +
        `${report.paired_ratios.join(', ')}, median ${report.paired_ratio_median})`,
    );
    console.log(
      `  (the same ratio over ${placebo.draws} placebo draws of windows as long, in steady load: ` +
        `median ${report.placebo_ratio_median}, p90 ${report.placebo_ratio_p90}; ` +
        `${(100 * placebo.atOrAbove).toFixed(1)}% of them at or above this run's ${report.p99_ratio})`,
    );
    if (failed.length > 0) console.log(`errors: ${formatErrors(errors)}`);
    console.log(JSON.stringify(report));
  } catch (error) {
    if (ranker !== undefined) console.error(`ranker log (tail):\n${ranker.logTail()}`);
    throw error;
  } finally {
    generator?.close();
    await ranker?.stop();
    await rm(root, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
