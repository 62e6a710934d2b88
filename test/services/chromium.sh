#!/usr/bin/env bash
# Chromium for the browser e2e specs (test/e2e/admin-page.e2e-spec.ts drives it with
# playwright-core). Not a server: `up` only makes sure the distribution's browser is installed.
#
#   test/services/chromium.sh up|down|status
#
# up      If `chromium` is missing, install the distribution's package with apt-get.
# down    Nothing to stop (the specs start and close their own browser).
# status  Print the browser's path and version; exit 0 if installed, 1 otherwise.
set -euo pipefail

SERVICE=chromium
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR source=service-lib.sh
source "$SCRIPT_DIR/service-lib.sh" # STATE_DIR, ensure_cmd, service_main

LOCK_FILE="$STATE_DIR/chromium.lock"

version() { chromium --version 2>/dev/null | head -n 1; }

cmd_up() {
  ensure_cmd chromium chromium
  echo "chromium: $(command -v chromium) ($(version))"
}

cmd_down() { :; }

cmd_status() {
  if command -v chromium >/dev/null 2>&1; then
    echo "chromium: $(command -v chromium) ($(version))"
    return 0
  fi
  echo "chromium: not installed"
  return 1
}

service_main 600 "$@"
