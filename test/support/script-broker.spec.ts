import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brokerStateDirs, scriptStartedBroker } from './script-broker';

const onLinux = process.platform === 'linux' ? it : it.skip;

describe('scriptStartedBroker', () => {
  let root: string;
  let stateDir: string;
  let stand: ChildProcess;

  /** A record as kafka.sh writes it, for `pid`. */
  const record = (dir: string, pid: number, port = 19092) =>
    writeFileSync(
      join(dir, 'kafka.info'),
      `version=4.4.0\ncluster_id=AbCdEfGhIjKlMnOpQrStUv\npid=${pid}\nport=${port}\nlibs=${dir}/kafka-libs-4.4.0\n`,
    );

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'script-broker-'));
    stateDir = join(root, 'state');
    mkdirSync(join(stateDir, 'kafka'), { recursive: true });
    // A stand-in broker: a process whose command line reads as kafka.sh launches the JVM's.
    stand = spawn(
      process.execPath,
      ['-e', 'process.stdin.resume()', 'kafka.Kafka', join(stateDir, 'kafka/server.properties')],
      { stdio: ['pipe', 'ignore', 'inherit'] },
    );
    await once(stand, 'spawn');
  });

  afterEach(async () => {
    if (stand.exitCode === null) {
      stand.stdin!.end();
      await once(stand, 'exit');
    }
    rmSync(root, { recursive: true, force: true });
  });

  it('reads the record of a live broker in the given state dir', () => {
    record(stateDir, stand.pid!);
    expect(scriptStartedBroker(stateDir, 19092)).toEqual({
      stateDir,
      pid: stand.pid,
      port: 19092,
      version: '4.4.0',
      clusterId: 'AbCdEfGhIjKlMnOpQrStUv',
      libs: `${stateDir}/kafka-libs-4.4.0`,
    });
  });

  onLinux("finds another checkout's record from the running broker's command line", () => {
    record(stateDir, stand.pid!);
    expect(brokerStateDirs()).toContain(stateDir);
    const elsewhere = join(root, 'fresh-clone', '.services');
    expect(scriptStartedBroker(elsewhere, 19092)?.stateDir).toBe(stateDir);
  });

  it('ignores a record on another port', () => {
    record(stateDir, stand.pid!, 29092);
    expect(scriptStartedBroker(stateDir, 19092)).toBeUndefined();
  });

  it('ignores a record whose broker has exited', async () => {
    record(stateDir, stand.pid!);
    stand.stdin!.end();
    await once(stand, 'exit');
    expect(scriptStartedBroker(stateDir, 19092)).toBeUndefined();
  });

  onLinux('ignores a record whose pid is now some other process', () => {
    record(stateDir, process.pid);
    expect(scriptStartedBroker(stateDir, 19092)).toBeUndefined();
  });

  it('ignores a state dir with no record, or a record without a pid', () => {
    expect(scriptStartedBroker(join(root, 'none'), 19092)).toBeUndefined();
    writeFileSync(join(stateDir, 'kafka.info'), 'version=4.4.0\nport=19092\n');
    expect(scriptStartedBroker(stateDir, 19092)).toBeUndefined();
  });
});
