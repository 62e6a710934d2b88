# shellcheck shell=bash
# Helpers shared by the test service scripts (redis.sh, redis-cluster.sh, kafka.sh, up.sh,
# down.sh). Sourced, never run; the sourcing script sets `set -euo pipefail` first.
#
# Sets REPO_ROOT, STATE_DIR (RANKER_SERVICES_DIR, default <repo>/.services) and MARKER (up.sh's
# record of what it started: RANKER_SERVICES_MARKER, default <state dir>/up.started).
# The service scripts set before calling the helpers:
#   SERVICE    the name that prefixes messages ("redis", "redis-cluster", "kafka"); also what
#              record_started writes
#   HOST       the address the service binds (port_open, redis_cmd)
#   LOCK_FILE  the service's lock (service_main)

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
STATE_DIR="${RANKER_SERVICES_DIR:-$REPO_ROOT/.services}"
# shellcheck disable=SC2034 # used by up.sh and down.sh
MARKER="${RANKER_SERVICES_MARKER:-$STATE_DIR/up.started}"

die() {
  echo "$SERVICE: ERROR: $*" >&2
  exit 1
}

# --- package installation (only when a binary is missing) -----------------------------------
APT_UPDATED=0
ensure_cmd() { # ensure_cmd <binary> <debian package>
  command -v "$1" >/dev/null 2>&1 && return 0
  local sudo=()
  if [[ "$(id -u)" != 0 ]]; then
    command -v sudo >/dev/null 2>&1 || die "'$1' is missing and not root (install package $2)"
    sudo=(sudo)
  fi
  command -v apt-get >/dev/null 2>&1 || die "'$1' is missing and apt-get is unavailable (install $2)"
  echo "$SERVICE: '$1' not found, installing $2 with apt-get" >&2
  if [[ "$APT_UPDATED" == 0 ]]; then
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || die "apt-get update failed"
    APT_UPDATED=1
  fi
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >&2 || die "apt-get install $2 failed"
  hash -r
  command -v "$1" >/dev/null 2>&1 || die "'$1' still missing after installing $2"
}

# --- probes (bash /dev/tcp, so status/down need no client tools) ----------------------------
port_open() { # port_open <port>: something accepts connections on $HOST:<port>
  timeout 3 bash -c "exec 3<>/dev/tcp/$HOST/$1" >/dev/null 2>&1
}

# redis_cmd <port> <inline command>: prints the reply (a bulk string's body, or the status/error
# line as is); fails if nothing answers in time.
redis_cmd() {
  # shellcheck disable=SC2016 # expanded by the inner bash
  timeout 3 bash -c '
    exec 3<>"/dev/tcp/$0/$1" || exit 1
    printf "%s\r\n" "$2" >&3
    IFS= read -r -t 2 line <&3 || exit 1
    line="${line%"$3"}"
    case "$line" in
    "\$-1") ;;
    "\$"*) head -c "${line#?}" <&3 ;;
    *) printf "%s\n" "$line" ;;
    esac
  ' "$HOST" "$1" "$2" $'\r' 2>/dev/null
}

ping_ok() { # ping_ok <port>: a Redis on $HOST:<port> answers PING with +PONG
  [[ "$(redis_cmd "$1" PING)" == "+PONG" ]]
}

# --- processes this script started ----------------------------------------------------------
# pidfile_pid <pidfile> <pattern>: prints the pid in <pidfile> if that process is alive and its
# command line matches <pattern> (grep regex), so a recycled pid is never taken for ours; fails
# otherwise
pidfile_pid() {
  local f=$1 pattern=$2 pid
  [[ -f "$f" ]] || return 1
  pid="$(cat "$f" 2>/dev/null || true)"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "$pattern" || return 1
  echo "$pid"
}

# stop_pids <noun> <timeout s> <poll s> <settle s> <pid>...: SIGTERM to all at once, then wait
# (polling every <poll> s) until they are gone; whatever is still alive after <timeout> s gets
# SIGKILL and <settle> s to go away. <noun> ("pid" or "pids") names them in that warning.
stop_pids() {
  local noun=$1 timeout=$2 poll=$3 settle=$4
  shift 4
  local pid alive deadline=$((SECONDS + timeout))
  (($# > 0)) || return 0
  kill -TERM "$@" 2>/dev/null || true
  while :; do
    alive=()
    for pid in "$@"; do kill -0 "$pid" 2>/dev/null && alive+=("$pid"); done
    ((${#alive[@]} > 0)) || return 0
    if ((SECONDS >= deadline)); then
      echo "$SERVICE: $noun ${alive[*]} still alive after ${timeout}s, sending SIGKILL" >&2
      kill -KILL "${alive[@]}" 2>/dev/null || true
      sleep "$settle"
      return 0
    fi
    sleep "$poll"
  done
}

# record_started: tells up.sh that this call started the service (RANKER_SERVICES_STARTED_LOG)
record_started() {
  if [[ -n "${RANKER_SERVICES_STARTED_LOG:-}" ]]; then
    echo "$SERVICE" >>"$RANKER_SERVICES_STARTED_LOG"
  fi
}

# show_log <file> <lines> [filter command...]: the last <lines> lines of <file> on stderr between
# rulers, piped through the filter if one is given (callers decide which files are worth it)
show_log() {
  local f=$1 n=$2
  shift 2
  echo "----- last $n lines of $f -----" >&2
  if (($# > 0)); then
    tail -n "$n" "$f" | "$@" >&2
  else
    tail -n "$n" "$f" >&2
  fi
  echo "--------------------------------------" >&2
}

# --- entry point ----------------------------------------------------------------------------
# service_main <lock wait s> <command>: checks the command (up|down|status), takes $LOCK_FILE
# (fd 9; serializes concurrent up/down calls, e.g. two test runs starting at once) and runs
# cmd_<command>, whose status is the script's exit code
service_main() {
  local wait=$1 cmd="${2:-}"
  case "$cmd" in
  up | down | status) ;;
  *)
    echo "usage: $0 up|down|status" >&2
    exit 2
    ;;
  esac
  mkdir -p "$STATE_DIR"
  exec 9>"$LOCK_FILE"
  if command -v flock >/dev/null 2>&1; then
    flock -w "$wait" 9 || die "timed out waiting for $LOCK_FILE"
  fi
  "cmd_$cmd"
}
