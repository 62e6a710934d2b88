/**
 * Preloaded into the ranker process by bench:rank (`node -r ranker-probe.ts apps/ranker/...`), so
 * the main thread's own figures are measured inside the ranker without a line of app code:
 * event-loop utilization (busy milliseconds), event-loop delay, and CPU time (the whole process's,
 * and the main thread's own where Linux's /proc tells it) since the last `mark`, sent back over
 * the IPC channel on `read`. Inert when the process has no IPC channel.
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { procStatFields } from '../support/proc-stat';

export type ToProbe = { probe: 'mark' | 'read'; id: number };
export interface ProbeReading {
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
  /** CPU time of the main thread alone since the mark, ms (10 ms ticks); NaN off Linux. */
  mainThreadCpuMs: number;
}

/** Milliseconds of CPU of the process's main thread: utime + stime of /proc/<pid>/task/<pid>. */
export function mainThreadCpuMs(pid = process.pid): number {
  try {
    const field = procStatFields(`/proc/${pid}/task/${pid}/stat`);
    // utime and stime, in clock ticks (100 per second on Linux).
    return (Number(field(14)) + Number(field(15))) * 10;
  } catch {
    return NaN;
  }
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
  process.on('message', (message: ToProbe) => {
    if (message?.probe === 'mark') {
      mark = performance.eventLoopUtilization();
      cpuMark = processCpuMs();
      mainCpuMark = mainThreadCpuMs();
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
      });
    } else if (message?.probe === 'read') {
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
        mainThreadCpuMs: mainThreadCpuMs() - mainCpuMark,
      };
      process.send!(reading);
    }
  });
  // The probe must never be what keeps the ranker alive.
  process.channel?.unref();
}
