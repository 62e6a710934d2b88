#!/usr/bin/env bash
# Stops the services that up.sh started (listed in its marker file) and nothing else.
#
#   test/services/down.sh         stop what the marker lists  (npm run services:down)
#   test/services/down.sh --all   stop every service these scripts started (pidfiles), marker or not
#
# Env: RANKER_SERVICES_DIR, RANKER_SERVICES_MARKER: as for up.sh
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR source=service-lib.sh
source "$SCRIPT_DIR/service-lib.sh" # STATE_DIR, MARKER
STOP_ORDER=(kafka redis-cluster redis)

case "${1:-}" in
--all) wanted=("${STOP_ORDER[@]}") ;;
"")
  if [[ ! -s "$MARKER" ]]; then
    rm -f "$MARKER"
    echo "services: nothing to stop (up.sh started nothing; '$0 --all' stops anything these scripts started)"
    exit 0
  fi
  mapfile -t wanted <"$MARKER"
  ;;
*)
  echo "usage: $0 [--all]" >&2
  exit 2
  ;;
esac

status=0
for svc in "${STOP_ORDER[@]}"; do
  for w in "${wanted[@]}"; do
    if [[ "$w" == "$svc" ]]; then
      bash "$SCRIPT_DIR/$svc.sh" down || status=1
    fi
  done
done
if [[ "$status" == 0 ]]; then
  rm -f "$MARKER"
fi
exit "$status"
