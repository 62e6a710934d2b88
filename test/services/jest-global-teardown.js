/**
 * Jest globalTeardown: stops what jest-global-setup.js started (test/services/down.sh with the
 * setup's marker), never a Redis/Kafka that was already running.
 *
 * RANKER_KEEP_SERVICES=1  leave them running; they are handed over to up.sh's default marker,
 *                         so `npm run services:down` stops them later.
 */
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

module.exports = async function rankerGlobalTeardown() {
  const state = globalThis.__RANKER_SERVICES__;
  if (!state || !fs.existsSync(state.marker)) return;
  const started = fs
    .readFileSync(state.marker, 'utf8')
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean);
  if (started.length === 0) {
    fs.rmSync(state.marker, { force: true });
    return;
  }

  if (process.env.RANKER_KEEP_SERVICES === '1') {
    const defaultMarker = path.join(state.stateDir, 'up.started');
    const previous = fs.existsSync(defaultMarker)
      ? fs.readFileSync(defaultMarker, 'utf8').split('\n').filter(Boolean)
      : [];
    const merged = [...new Set([...previous, ...started])].sort();
    fs.writeFileSync(defaultMarker, `${merged.join('\n')}\n`);
    fs.rmSync(state.marker, { force: true });
    process.stdout.write(
      `services: RANKER_KEEP_SERVICES=1, leaving ${started.join(', ')} running (stop: npm run services:down)\n`,
    );
    return;
  }

  const result = spawnSync('bash', [path.join(__dirname, 'down.sh')], {
    stdio: 'inherit',
    env: {
      ...process.env,
      RANKER_SERVICES_DIR: state.stateDir,
      RANKER_SERVICES_MARKER: state.marker,
    },
  });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(`test/services/down.sh failed (exit ${result.status ?? result.signal})`);
  }
};
