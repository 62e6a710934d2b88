/**
 * Preloaded into the ranker process by bench:rank (`node -r ranker-probe.ts apps/ranker/...`), so
 * the main thread's own figures are measured inside the ranker without a line of app code:
 * event-loop utilization (busy milliseconds) and event-loop delay since the last `mark`, sent
 * back over the IPC channel on `read`. Inert when the process has no IPC channel.
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

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
}

if (typeof process.send === 'function') {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  let mark = performance.eventLoopUtilization();
  process.on('message', (message: ToProbe) => {
    if (message?.probe === 'mark') {
      mark = performance.eventLoopUtilization();
      delay.reset();
      process.send!({
        probe: 'reading',
        id: message.id,
        activeMs: 0,
        idleMs: 0,
        utilization: 0,
        loopP99Ms: 0,
        loopMaxMs: 0,
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
      };
      process.send!(reading);
    }
  });
  // The probe must never be what keeps the ranker alive.
  process.channel?.unref();
}
