import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** What test/services/kafka.sh records about the broker it started (`<state dir>/kafka.info`). */
export interface ScriptBroker {
  /** The state dir whose kafka.info names the broker. */
  stateDir: string;
  pid: number;
  port: number;
  version: string;
  clusterId: string;
  libs: string;
}

/**
 * The live broker on `port` that test/services/kafka.sh started, as its kafka.info records it;
 * undefined when none did (an external broker, or none at all). Looked for first in `stateDir`
 * (this checkout's), then, on Linux, in the state dir of whichever checkout's kafka.sh started the
 * broker running now, found from the broker's command line (`kafka.Kafka <state
 * dir>/kafka/server.properties`): the test command reuses a broker that answers, so a fresh clone
 * tested on a machine whose services another checkout started has none of its own. A record
 * counts only while its pid is alive, is a Kafka broker (where /proc can tell) and listens on
 * `port` by the record.
 */
export function scriptStartedBroker(stateDir: string, port: number): ScriptBroker | undefined {
  const live = (dir: string) => {
    const broker = readRecord(dir);
    return broker && broker.port === port && isLiveBroker(broker.pid) ? broker : undefined;
  };
  // /proc is walked only when this checkout has no live record of its own.
  const own = live(stateDir);
  if (own) return own;
  for (const dir of brokerStateDirs()) {
    const broker = live(dir);
    if (broker) return broker;
  }
  return undefined;
}

/** The state dirs named by the command lines of the Kafka brokers running here (Linux; else none). */
export function brokerStateDirs(): string[] {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  const dirs = new Set<string>();
  for (const pid of pids) {
    const args = commandLine(Number(pid));
    const at = args?.indexOf('kafka.Kafka') ?? -1;
    const config = at >= 0 ? args![at + 1] : undefined;
    if (config?.endsWith('/kafka/server.properties')) dirs.add(dirname(dirname(config)));
  }
  return [...dirs];
}

function readRecord(dir: string): ScriptBroker | undefined {
  let text: string;
  try {
    text = readFileSync(join(dir, 'kafka.info'), 'utf8');
  } catch {
    return undefined;
  }
  const info: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) info[line.slice(0, eq)] = line.slice(eq + 1);
  }
  const pid = Number(info.pid);
  const port = Number(info.port);
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port)) return undefined;
  return {
    stateDir: dir,
    pid,
    port,
    version: info.version ?? '',
    clusterId: info.cluster_id ?? '',
    libs: info.libs ?? '',
  };
}

/** Alive, and a Kafka broker where /proc says (so a reused pid does not count). */
function isLiveBroker(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const args = commandLine(pid);
  return args === undefined || args.includes('kafka.Kafka');
}

/** A process's arguments from /proc; undefined where there is no /proc or the process is gone. */
function commandLine(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0');
  } catch {
    return undefined;
  }
}
