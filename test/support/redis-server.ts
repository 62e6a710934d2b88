import { ChildProcess, spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { redisAnswers } from './redis-ping';

/**
 * A throwaway redis-server (no persistence) on `port`, for specs that kill, freeze or restart
 * their own Redis; resolves once it answers PING.
 */
export async function startRedis(port: number, dir: string): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { cwd: dir, stdio: 'ignore' },
  );
  for (const until = Date.now() + 10_000; Date.now() < until; await sleep(50)) {
    if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode})`);
    if (await redisAnswers(port)) return child;
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server did not answer on ${port} within 10 s`);
}

/** Kills it (SIGKILL) and waits for it to be gone; nothing to do if it already is. */
export async function stopRedis(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGKILL');
  await exited;
}
