import { isMainThread } from 'node:worker_threads';

/** The onnxruntime switch, read from the process environment when its environment is created. */
export const ORT_DISABLE_TELEMETRY = 'ORT_DISABLE_TELEMETRY';

/**
 * Turns onnxruntime's own telemetry off unless `enabled` (SCORING_ORT_TELEMETRY). The Linux build
 * of onnxruntime-node 1.30 records events (each session's creation, a periodic runtime summary,
 * the machine's metrics) into a SQLite file under
 * `$XDG_CACHE_HOME/Microsoft/DeveloperTools/.onnxruntime` (`~/.cache` when XDG_CACHE_HOME is
 * unset), leaves an empty `/tmp/mat-debug-<pid>.log` per process, and uploads the events to
 * `mobile.events.data.microsoft.com` when it finds a CA bundle to check the server with. A
 * ranking service does not report its traffic to a third party unless its operator asks it to.
 *
 * onnxruntime reads the variable with getenv when the process's first session starts. A worker
 * thread's `process.env` is a copy that never reaches the process environment, so this must run
 * on the main thread before any model thread loads onnxruntime: the engine calls it as it is
 * built. With `enabled`, the environment is left as the operator set it (their own
 * ORT_DISABLE_TELEMETRY=1 still turns it off).
 */
export function applyOrtTelemetry(enabled: boolean, env: NodeJS.ProcessEnv = process.env): void {
  if (enabled) return;
  if (!isMainThread && env === process.env) {
    throw new Error(
      `${ORT_DISABLE_TELEMETRY} must be set on the main thread: a worker's process.env does not reach onnxruntime`,
    );
  }
  env[ORT_DISABLE_TELEMETRY] = '1';
}
