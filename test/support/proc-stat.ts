import { readdirSync, readFileSync } from 'node:fs';

/**
 * The fields of a Linux `/proc/.../stat` file (proc(5)) by their 1-based number, so that field 14
 * is `fields(path)(14)`. The command name (field 2) may hold spaces and parentheses: fields are
 * counted from the last `)`, where the state (field 3) follows. Throws off Linux (no such file).
 */
export function procStatFields(path: string): (field: number) => string {
  const stat = readFileSync(path, 'latin1');
  const fromState = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (field) => fromState[field - 3];
}

/** utime + stime of each thread of `pid` in ms (10 ms ticks), with its nice value. */
export function threadCpu(pid = process.pid): Map<number, { cpuMs: number; nice: number }> {
  const threads = new Map<number, { cpuMs: number; nice: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const field = procStatFields(`/proc/${pid}/task/${tid}/stat`);
      threads.set(Number(tid), {
        cpuMs: (Number(field(14)) + Number(field(15))) * 10,
        nice: Number(field(19)),
      });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return threads;
}

/** threadCpu(pid) now, or undefined where /proc cannot tell (off Linux, a process gone). */
export function threadMark(
  pid = process.pid,
): Map<number, { cpuMs: number; nice: number }> | undefined {
  try {
    return threadCpu(pid);
  } catch {
    return undefined;
  }
}

/**
 * CPU time of `pid` since `mark` (threadMark's reading then), from one reading of /proc: every
 * thread's (`total`), the main thread's (`main`), and the model threads' (`model`: those at the
 * lowest nice value above the main thread's, SCORING_WORKER_NICE; the helper threads the engine
 * lowers one step further, V8's and libuv's, are not among them; NaN when no thread runs above the
 * main thread's nice). A thread started since counts from 0. All NaN without a mark, or off Linux.
 */
export function threadCpuSince(
  mark: Map<number, { cpuMs: number }> | undefined,
  pid = process.pid,
): { total: number; main: number; model: number } {
  const now = mark === undefined ? undefined : threadMark(pid);
  if (mark === undefined || now === undefined) return { total: NaN, main: NaN, model: NaN };
  const mainNice = now.get(pid)?.nice ?? 0;
  let modelNice = Infinity;
  for (const { nice } of now.values()) if (nice > mainNice && nice < modelNice) modelNice = nice;
  let total = 0;
  let model = 0;
  for (const [tid, { cpuMs, nice }] of now) {
    const spent = cpuMs - (mark.get(tid)?.cpuMs ?? 0);
    total += spent;
    if (tid !== pid && nice === modelNice) model += spent;
  }
  const main = (now.get(pid)?.cpuMs ?? NaN) - (mark.get(pid)?.cpuMs ?? NaN);
  return { total, main, model: modelNice === Infinity ? NaN : model };
}

/** The model threads' share of threadCpuSince. */
export function modelThreadsCpuMs(
  mark: Map<number, { cpuMs: number }> | undefined,
  pid = process.pid,
): number {
  return threadCpuSince(mark, pid).model;
}

/** Milliseconds of CPU of the process's main thread: utime + stime of /proc/<pid>/task/<pid>. */
export function mainThreadCpuMs(pid = process.pid): number {
  return statCpuMs(`/proc/${pid}/task/${pid}/stat`);
}

/**
 * Milliseconds of CPU of the whole process `pid` (utime + stime of /proc/<pid>/stat: every thread,
 * ended ones included); NaN where /proc cannot tell (off Linux, a process gone).
 */
export function processCpuMs(pid = process.pid): number {
  return statCpuMs(`/proc/${pid}/stat`);
}

/** utime + stime of a proc(5) stat file in ms (clock ticks, 100 per second on Linux); NaN unread. */
function statCpuMs(path: string): number {
  try {
    const field = procStatFields(path);
    return (Number(field(14)) + Number(field(15))) * 10;
  } catch {
    return NaN;
  }
}
