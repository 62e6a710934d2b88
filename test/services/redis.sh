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

SERVICE=redis
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR source=service-lib.sh
source "$SCRIPT_DIR/service-lib.sh" # STATE_DIR, die, ensure_cmd, probes, stop_pids, service_main

HOST=127.0.0.1
PORT="${RANKER_REDIS_PORT:-6379}"
START_TIMEOUT=20
STOP_TIMEOUT=15

DATA_DIR="$STATE_DIR/redis"
LOG_FILE="$STATE_DIR/redis.log"
PID_FILE="$STATE_DIR/redis.pid"
LOCK_FILE="$STATE_DIR/redis.lock"

managed_pid() { pidfile_pid "$PID_FILE" 'redis-server'; }

log_tail() {
  if [[ -f "$LOG_FILE" ]]; then show_log "$LOG_FILE" 20; fi
}

cmd_up() {
  local t0=$SECONDS pid
  if ping_ok "$PORT"; then
    if pid="$(managed_pid)"; then
      echo "redis: already running on $PORT (started by this script, pid $pid)"
    else
      echo "redis: already running on $PORT"
    fi
    return 0
  fi
  port_open "$PORT" && die "port $PORT is in use by something that does not answer PING with +PONG"
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
  until ping_ok "$PORT"; do
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
  record_started
  echo "redis: started on $PORT in $((SECONDS - t0)) s"
}

stop_pid() { # stop_pid <pid>: SIGTERM (no persistence configured, so it exits at once), then SIGKILL
  stop_pids pid "$STOP_TIMEOUT" 0.1 0.2 "$1"
}

cmd_down() {
  local pid
  if pid="$(managed_pid)"; then
    stop_pid "$pid"
    rm -f "$PID_FILE"
    echo "redis: stopped (pid $pid)"
  else
    rm -f "$PID_FILE"
    if ping_ok "$PORT"; then
      echo "redis: not started by this script, leaving the Redis on $PORT alone"
    else
      echo "redis: not running"
    fi
  fi
}

cmd_status() {
  local pid
  if ping_ok "$PORT"; then
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

service_main 120 "$@"
