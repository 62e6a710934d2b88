/**
 * Jest globalSetup: starts Redis and Kafka (test/services/up.sh) unless something already answers
 * on their ports, and installs Chromium for the browser specs if it is missing. What this run
 * started is recorded in a marker file of its own, so jest-global-teardown.js stops exactly that.
 *
 * RANKER_SKIP_SERVICES=1  start nothing (unit tests only, or services managed elsewhere)
 */
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const repoRoot = path.resolve(__dirname, '..', '..');

module.exports = async function rankerGlobalSetup() {
  if (process.env.RANKER_SKIP_SERVICES === '1') {
    process.stdout.write(
      '\nservices: RANKER_SKIP_SERVICES=1, not starting Redis, the Redis Cluster and Kafka nor installing Chromium\n',
    );
    return;
  }
  const stateDir = path.resolve(
    process.env.RANKER_SERVICES_DIR || path.join(repoRoot, '.services'),
  );
  fs.mkdirSync(stateDir, { recursive: true });
  const marker = path.join(stateDir, `jest-started.${process.pid}`);
  fs.rmSync(marker, { force: true });
  // read back by jest-global-teardown.js (same process)
  globalThis.__RANKER_SERVICES__ = { marker, stateDir };

  process.stdout.write('\n');
  const result = spawnSync('bash', [path.join(__dirname, 'up.sh')], {
    cwd: repoRoot,
    stdio: 'inherit',
    env: { ...process.env, RANKER_SERVICES_DIR: stateDir, RANKER_SERVICES_MARKER: marker },
  });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(
      `test/services/up.sh failed (${result.signal ? `signal ${result.signal}` : `exit ${result.status}`}); ` +
        'see the output above. RANKER_SKIP_SERVICES=1 runs the tests without starting services.',
    );
  }
};
