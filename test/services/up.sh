#!/usr/bin/env bash
# Starts the services the integration/e2e tests need (Redis on 6379, a three-master Redis Cluster
# on 7000-7002, Kafka on 9092), each only if nothing answers on its port(s) yet, and makes sure
# the distribution's Chromium is installed for the browser specs. What this run
# starts is added to a marker file so that down.sh stops exactly that and never a service someone
# else runs.
#
#   test/services/up.sh          (npm run services:up)
#
# Env: RANKER_SERVICES_DIR     state dir (default <repo>/.services)
#      RANKER_SERVICES_MARKER  marker file (default <state dir>/up.started); jest's globalSetup
#                              uses its own one so its teardown stops only what it started
# If a service fails to start, the ones this run already started are stopped again.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR source=service-lib.sh
source "$SCRIPT_DIR/service-lib.sh" # STATE_DIR, MARKER
SERVICES=(redis redis-cluster kafka chromium)

mkdir -p "$STATE_DIR" "$(dirname "$MARKER")"
STARTED_LOG="$(mktemp "$STATE_DIR/.up-started.XXXXXX")"
trap 'rm -f "$STARTED_LOG"' EXIT
export RANKER_SERVICES_STARTED_LOG="$STARTED_LOG"

for svc in "${SERVICES[@]}"; do
  if ! bash "$SCRIPT_DIR/$svc.sh" up; then
    echo "services: $svc failed to start" >&2
    # roll back what this run started (newest first)
    mapfile -t started < <(tac "$STARTED_LOG")
    for s in "${started[@]}"; do
      bash "$SCRIPT_DIR/$s.sh" down >&2 || true
    done
    exit 1
  fi
done

# marker := marker ∪ started-now (a second up.sh before down.sh keeps the first one's services)
if [[ -s "$STARTED_LOG" ]]; then
  cat "$STARTED_LOG" >>"$MARKER"
  sort -u "$MARKER" -o "$MARKER"
fi
