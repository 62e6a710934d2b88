import { readdirSync, readFileSync } from 'node:fs';
import { setPriority } from 'node:os';

/**
 * Lowers the threads of this process that run above `below` (at a lower nice value), all but its
 * event loop (the thread whose id is the process id), to `nice`: V8's platform threads (concurrent
 * compilation and marking, parallel GC), libuv's pool, and worker threads started at the event
 * loop's nice. Threads at `below` or lower priority (the model threads) keep theirs. Returns how
 * many threads were lowered; 0 off Linux (no /proc/self/task) or with `nice` <= 0.
 *
 * Why: on Linux a nice value belongs to a thread, and a thread starts at its creator's, so these
 * helpers run at the event loop's nice 0, above model threads at SCORING_WORKER_NICE. When a
 * bundle version loads beside traffic, V8's background work for it (compilation, garbage
 * collection) runs on all its platform threads at once: on two cores a serving model thread then
 * waited up to 36 ms for a core (`perf sched`), and the requests of a swap window waited with it
 * (README: bench:swap). Raising a nice value needs no privilege. Call it from the event-loop
 * thread.
 */
export function lowerHelperThreads(nice: number, below = nice, tasks = '/proc/self/task'): number {
  if (nice <= 0) return 0;
  let tids: string[];
  try {
    tids = readdirSync(tasks);
  } catch {
    return 0;
  }
  let lowered = 0;
  for (const tid of tids) {
    if (Number(tid) === process.pid) continue;
    try {
      if (threadNice(`${tasks}/${tid}/stat`) >= Math.min(below, nice)) continue;
      setPriority(Number(tid), nice);
      lowered++;
    } catch {
      // The thread ended between the listing and now.
    }
  }
  return lowered;
}

/** The nice value (field 19) of a /proc stat file; fields counted from the last `)`. */
function threadNice(path: string): number {
  const stat = readFileSync(path, 'latin1');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19 - 3]);
}
