/**
 * Preloaded into the ranker process by bench:rank (`node -r ranker-probe.ts apps/ranker/...`), so
 * the main thread's own figures are measured inside the ranker without a line of app code:
 * event-loop utilization (busy milliseconds), event-loop delay, and CPU time (the whole process's,
 * and where Linux's /proc tells it the main thread's own and the model threads') since the last
 * `mark`, and the main thread's garbage-collection pauses, sent back over the IPC channel on
 * `read`. Inert when the process has no IPC channel.
 */
import {
  constants,
  monitorEventLoopDelay,
  performance,
  PerformanceEntry,
  PerformanceObserver,
} from 'node:perf_hooks';
import { mainThreadCpuMs, modelThreadsCpuMs, threadMark } from '../support/proc-stat';

export type ToProbe = { probe: 'mark' | 'read'; id: number };
export interface ProbeReading extends GcPauses {
  probe: 'reading';
  id: number;
  /** Milliseconds the event loop was busy since the mark. */
  activeMs: number;
  idleMs: number;
  utilization: number;
  /** Event-loop delay percentiles since the mark, ms (sampled every 1 ms, so ~1 ms when idle). */
  loopP99Ms: number;
  loopMaxMs: number;
  /** CPU time of every thread of the process (user + system) since the mark, ms. */
  processCpuMs: number;
  /**
   * CPU time of the main thread alone since the mark, ms (10 ms ticks); null off Linux (a figure
   * that is not known is null: NaN does not survive the IPC channel's JSON).
   */
  mainThreadCpuMs: number | null;
  /**
   * CPU time of the threads at the lowest nice value above the main thread's since the mark, ms
   * (10 ms ticks): the model threads, which lower theirs to SCORING_WORKER_NICE (10 by default)
   * as they start, and the onnxruntime threads they start; the helper threads the engine lowers
   * one step further (lowerHelperThreads) are not counted here. Null off Linux, and when no thread
   * runs above the main thread's nice (SCORING_WORKER_NICE=0: the model threads cannot be told
   * apart). A thread that ended since the mark is not counted.
   */
  modelThreadsCpuMs: number | null;
}

/**
 * The main thread's garbage-collection pauses since the mark (perf_hooks `gc` entries), ms:
 * scavenges of the young generation, and mark-compacts with the incremental-marking steps and
 * weak-callback passes the main thread ran for them. The collector's helper threads work beside
 * these pauses; their CPU is in processCpuMs, not here.
 */
export interface GcPauses {
  gcScavengeMs: number;
  gcMarkCompactMs: number;
  scavenges: number;
  markCompacts: number;
}

/**
 * Adds one perf_hooks `gc` entry (its `detail.kind`, its duration) to `into`: a minor collection
 * is a scavenge; a major one, an incremental-marking step or a weak-callback pass belongs to a
 * mark-compact, counted once (at its major entry).
 */
export function addGcPause(into: GcPauses, kind: number, durationMs: number): void {
  if (kind === constants.NODE_PERFORMANCE_GC_MINOR) {
    into.gcScavengeMs += durationMs;
    into.scavenges++;
    return;
  }
  into.gcMarkCompactMs += durationMs;
  if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) into.markCompacts++;
}

/** A perf_hooks `gc` entry's detail (its typings leave it out of PerformanceEntry). */
interface GcEntry {
  detail: { kind: number };
}

function noPauses(): GcPauses {
  return { gcScavengeMs: 0, gcMarkCompactMs: 0, scavenges: 0, markCompacts: 0 };
}

function known(value: number): number | null {
  return Number.isNaN(value) ? null : value;
}

function processCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

if (typeof process.send === 'function') {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  let mark = performance.eventLoopUtilization();
  let cpuMark = processCpuMs();
  let mainCpuMark = mainThreadCpuMs();
  let threadsMark = threadMark();
  let pauses = noPauses();
  const count = (entries: PerformanceEntry[]) => {
    for (const entry of entries)
      addGcPause(pauses, (entry as unknown as GcEntry).detail.kind, entry.duration);
  };
  const gcs = new PerformanceObserver((list) => count(list.getEntries()));
  gcs.observe({ entryTypes: ['gc'] });
  process.on('message', (message: ToProbe) => {
    if (message?.probe === 'mark') {
      gcs.takeRecords();
      pauses = noPauses();
      mark = performance.eventLoopUtilization();
      cpuMark = processCpuMs();
      mainCpuMark = mainThreadCpuMs();
      threadsMark = threadMark();
      delay.reset();
      process.send!({
        probe: 'reading',
        id: message.id,
        activeMs: 0,
        idleMs: 0,
        utilization: 0,
        loopP99Ms: 0,
        loopMaxMs: 0,
        processCpuMs: 0,
        mainThreadCpuMs: 0,
        modelThreadsCpuMs: 0,
        ...noPauses(),
      });
    } else if (message?.probe === 'read') {
      // Entries not yet delivered to the observer's callback belong to this window too.
      count(gcs.takeRecords());
      const used = performance.eventLoopUtilization(mark);
      const reading: ProbeReading = {
        probe: 'reading',
        id: message.id,
        activeMs: used.active,
        idleMs: used.idle,
        utilization: used.utilization,
        loopP99Ms: delay.percentile(99) / 1e6,
        loopMaxMs: delay.max / 1e6,
        processCpuMs: processCpuMs() - cpuMark,
        mainThreadCpuMs: known(mainThreadCpuMs() - mainCpuMark),
        modelThreadsCpuMs: known(modelThreadsCpuMs(threadsMark)),
        ...pauses,
      };
      process.send!(reading);
    }
  });
  // The probe must never be what keeps the ranker alive.
  process.channel?.unref();
}
