#!/usr/bin/env bash
# Redis for the tests.
#
#   test/services/redis.sh up|down|status
#
# up      If something answers PING on 127.0.0.1:6379, do nothing. Otherwise start redis-server
#         (daemonized, no persistence; log and pidfile in the state dir) and wait for PONG.
# down    Stop the Redis this script started (pidfile). Any other Redis is never touched.
# status  Print what runs on 6379; exit 0 if it answers PING, 1 otherwise.
#
# Env: RANKER_SERVICES_DIR  state dir (default <repo>/.services)
#      RANKER_REDIS_PORT    port (default 6379)
#      RANKER_SERVICES_STARTED_LOG  if set, "redis" is appended to this file when `up` starts it
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd)"
STATE_DIR="${RANKER_SERVICES_DIR:-$REPO_ROOT/.services}"

HOST=127.0.0.1
PORT="${RANKER_REDIS_PORT:-6379}"
START_TIMEOUT=20
STOP_TIMEOUT=15

DATA_DIR="$STATE_DIR/redis"
LOG_FILE="$STATE_DIR/redis.log"
PID_FILE="$STATE_DIR/redis.pid"
LOCK_FILE="$STATE_DIR/redis.lock"

die() {
  echo "redis: ERROR: $*" >&2
  exit 1
}

APT_UPDATED=0
ensure_cmd() { # ensure_cmd <binary> <debian package>
  command -v "$1" >/dev/null 2>&1 && return 0
  local sudo=()
  if [[ "$(id -u)" != 0 ]]; then
    command -v sudo >/dev/null 2>&1 || die "'$1' is missing and not root (install package $2)"
    sudo=(sudo)
  fi
  command -v apt-get >/dev/null 2>&1 || die "'$1' is missing and apt-get is unavailable (install $2)"
  echo "redis: '$1' not found, installing $2 with apt-get" >&2
  if [[ "$APT_UPDATED" == 0 ]]; then
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || die "apt-get update failed"
    APT_UPDATED=1
  fi
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >&2 || die "apt-get install $2 failed"
  hash -r
  command -v "$1" >/dev/null 2>&1 || die "'$1' still missing after installing $2"
}

port_open() {
  timeout 3 bash -c "exec 3<>/dev/tcp/$HOST/$PORT" >/dev/null 2>&1
}

# Sends an inline PING over /dev/tcp; succeeds on +PONG (no redis-cli needed).
ping_ok() {
  local reply
  # shellcheck disable=SC2016 # expanded by the inner bash
  reply="$(timeout 3 bash -c '
    exec 3<>"/dev/tcp/$0/$1" || exit 1
    printf "PING\r\n" >&3
    IFS= read -r -t 2 line <&3 || exit 1
    printf "%s" "$line"
  ' "$HOST" "$PORT" 2>/dev/null)" || return 1
  [[ "${reply%$'\r'}" == "+PONG" ]]
}

managed_pid() {
  [[ -f "$PID_FILE" ]] || return 1
  local pid
  pid="$(cat "$PID_FILE" 2>/dev/null || true)"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'redis-server' || return 1
  echo "$pid"
}

log_tail() {
  if [[ -f "$LOG_FILE" ]]; then
    echo "----- last 20 lines of $LOG_FILE -----" >&2
    tail -n 20 "$LOG_FILE" >&2
    echo "--------------------------------------" >&2
  fi
}

cmd_up() {
  local t0=$SECONDS pid
  if ping_ok; then
    if pid="$(managed_pid)"; then
      echo "redis: already running on $PORT (started by this script, pid $pid)"
    else
      echo "redis: already running on $PORT"
    fi
    return 0
  fi
  port_open && die "port $PORT is in use by something that does not answer PING with +PONG"
  rm -f "$PID_FILE"
  ensure_cmd redis-server redis-server
  mkdir -p "$DATA_DIR"
  : >"$LOG_FILE"
  # redis-server daemonizes itself (double fork, setsid) and writes the pidfile; it logs to
  # --logfile once daemonized, anything before that (bad option) lands in the same file.
  # shellcheck disable=SC2094
  if ! redis-server --bind "$HOST" --port "$PORT" --daemonize yes \
    --save "" --appendonly no --dir "$DATA_DIR" \
    --logfile "$LOG_FILE" --pidfile "$PID_FILE" </dev/null >>"$LOG_FILE" 2>&1 9>&-; then
    log_tail
    die "redis-server failed to start"
  fi
  local deadline=$((SECONDS + START_TIMEOUT))
  until ping_ok; do
    if ((SECONDS >= deadline)); then
      log_tail
      if pid="$(managed_pid)"; then stop_pid "$pid"; fi
      rm -f "$PID_FILE"
      die "redis-server did not answer PING on $HOST:$PORT within ${START_TIMEOUT}s (log: $LOG_FILE)"
    fi
    sleep 0.2
  done
  # the pidfile is written by the daemon; make sure it is there before reporting success
  until pid="$(managed_pid)"; do
    ((SECONDS < deadline)) || die "redis answers on $PORT but $PID_FILE names no live redis-server"
    sleep 0.1
  done
  [[ -n "${RANKER_SERVICES_STARTED_LOG:-}" ]] && echo redis >>"$RANKER_SERVICES_STARTED_LOG"
  echo "redis: started on $PORT in $((SECONDS - t0)) s"
}

stop_pid() { # stop_pid <pid>: SIGTERM (no persistence configured, so it exits at once), then SIGKILL
  local pid=$1 deadline=$((SECONDS + STOP_TIMEOUT))
  kill -TERM "$pid" 2>/dev/null || return 0
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS >= deadline)); then
      echo "redis: pid $pid still alive after ${STOP_TIMEOUT}s, sending SIGKILL" >&2
      kill -KILL "$pid" 2>/dev/null || true
      sleep 0.2
      break
    fi
    sleep 0.1
  done
}

cmd_down() {
  local pid
  if pid="$(managed_pid)"; then
    stop_pid "$pid"
    rm -f "$PID_FILE"
    echo "redis: stopped (pid $pid)"
  else
    rm -f "$PID_FILE"
    if ping_ok; then
      echo "redis: not started by this script, leaving the Redis on $PORT alone"
    else
      echo "redis: not running"
    fi
  fi
}

cmd_status() {
  local pid
  if ping_ok; then
    if pid="$(managed_pid)"; then
      echo "redis: running on $PORT (started by this script, pid $pid)"
    else
      echo "redis: running on $PORT (not started by this script)"
    fi
    return 0
  fi
  if pid="$(managed_pid)"; then
    echo "redis: pid $pid (started by this script) is alive but does not answer PING on $PORT"
  else
    echo "redis: not running"
  fi
  return 1
}

main() {
  local cmd="${1:-}"
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
    flock -w 120 9 || die "timed out waiting for $LOCK_FILE"
  fi
  "cmd_$cmd"
}

main "$@"
