#!/usr/bin/env bash
# Three-master Redis Cluster for the cluster tests (no replicas, no persistence).
#
#   test/services/redis-cluster.sh up|down|status
#
# up      If a healthy cluster (cluster_state:ok, all 16384 slots assigned) already answers on
#         127.0.0.1:7000-7002, do nothing. If those ports (or their cluster bus ports, +10000)
#         answer but are not a healthy cluster, fail; a server this script did not start is never
#         touched. Otherwise start three `redis-server --cluster-enabled yes` masters from clean
#         node dirs (daemonized; node dirs, nodes.conf, logs and pidfiles in the state dir), join
#         them with `redis-cli --cluster create ... --cluster-replicas 0` and wait until every node
#         reports cluster_state:ok with all slots assigned.
# down    Stop the nodes this script started (pidfiles). Any other Redis is never touched.
# status  Print what runs on the cluster ports; exit 0 if a healthy cluster answers, 1 otherwise.
#
# Env: RANKER_SERVICES_DIR        state dir (default <repo>/.services)
#      RANKER_REDIS_CLUSTER_PORT  first port (default 7000); the nodes use it and the next two
#      RANKER_SERVICES_STARTED_LOG  if set, "redis-cluster" is appended to this file when `up` starts it
set -euo pipefail

SERVICE=redis-cluster
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR source=service-lib.sh
source "$SCRIPT_DIR/service-lib.sh" # STATE_DIR, die, ensure_cmd, probes, stop_pids, service_main

HOST=127.0.0.1
BASE_PORT="${RANKER_REDIS_CLUSTER_PORT:-7000}"
NODE_COUNT=3
BUS_OFFSET=10000 # redis-server default: cluster bus on port + 10000
START_TIMEOUT=20
CLUSTER_TIMEOUT=30
STOP_TIMEOUT=15
TOTAL_SLOTS=16384

RUN_DIR="$STATE_DIR/redis-cluster"           # <port>/ per node (its nodes.conf), recreated on up
CREATE_LOG="$STATE_DIR/redis-cluster-create-$BASE_PORT.log"
LOCK_FILE="$STATE_DIR/redis-cluster.lock"

if ! [[ "$BASE_PORT" =~ ^[0-9]+$ ]] || ((BASE_PORT < 1 || BASE_PORT + NODE_COUNT - 1 + BUS_OFFSET > 65535)); then
  die "RANKER_REDIS_CLUSTER_PORT=$BASE_PORT is not a usable port (it and the next $((NODE_COUNT - 1)) plus $BUS_OFFSET must be <= 65535)"
fi

PORTS=()
for ((i = 0; i < NODE_COUNT; i++)); do PORTS+=($((BASE_PORT + i))); done
PORT_RANGE="${PORTS[0]}-${PORTS[-1]}"

node_dir() { echo "$RUN_DIR/$1"; }
remove_node_dirs() {
  local p
  for p in "${PORTS[@]}"; do rm -rf "$(node_dir "$p")"; done
  rmdir "$RUN_DIR" 2>/dev/null || true
}
log_file() { echo "$STATE_DIR/redis-cluster-$1.log"; }
pid_file() { echo "$STATE_DIR/redis-cluster-$1.pid"; }

# --- probes (port_open, redis_cmd, ping_ok: service-lib.sh) ---------------------------------
# node_health <port>: prints "ok" for a node that reports cluster_state:ok with all slots
# assigned, otherwise a short description (for messages); fails unless "ok".
node_health() {
  local info state slots
  if ! info="$(redis_cmd "$1" 'CLUSTER INFO')" || [[ -z "$info" ]]; then
    if port_open "$1"; then echo "port open, no Redis reply"; else echo "nothing listening"; fi
    return 1
  fi
  if [[ "$info" == -* ]]; then
    echo "${info#-}"
    return 1
  fi
  state="$(sed -n 's/^cluster_state:\([a-z]*\).*/\1/p' <<<"$info")"
  slots="$(sed -n 's/^cluster_slots_assigned:\([0-9]*\).*/\1/p' <<<"$info")"
  if [[ "$state" == ok && "$slots" == "$TOTAL_SLOTS" ]]; then
    echo ok
    return 0
  fi
  echo "cluster_state:${state:-?}, ${slots:-?}/$TOTAL_SLOTS slots assigned"
  return 1
}

cluster_ok() { # every node is healthy
  local p
  for p in "${PORTS[@]}"; do node_health "$p" >/dev/null || return 1; done
}

# pid of the node this script started on <port>, if alive (verified via its process title,
# "redis-server 127.0.0.1:<port> [cluster]")
managed_pid() { pidfile_pid "$(pid_file "$1")" "redis-server.*:$1\b"; }

managed_pids() { # pids of all live nodes this script started (space separated); fails if none
  local p pid out=()
  for p in "${PORTS[@]}"; do
    if pid="$(managed_pid "$p")"; then out+=("$pid"); fi
  done
  ((${#out[@]} > 0)) || return 1
  echo "${out[*]}"
}

log_tails() { # log_tails <file>...
  local f
  for f in "$@"; do
    [[ -s "$f" ]] || continue
    show_log "$f" 20 sed 's/\x1b\[[0-9;]*m//g'
  done
}

node_logs() {
  local p
  for p in "${PORTS[@]}"; do log_file "$p"; done
}

stop_managed() { # stops every node this script started
  local p pid pids=()
  for p in "${PORTS[@]}"; do
    if pid="$(managed_pid "$p")"; then pids+=("$pid"); fi
  done
  # SIGTERM to all at once (no persistence configured, so they exit at once; a redis-server
  # still takes ~2 s to go away on some machines), then SIGKILL after a timeout
  stop_pids pids "$STOP_TIMEOUT" 0.1 0.2 "${pids[@]}"
  for p in "${PORTS[@]}"; do rm -f "$(pid_file "$p")"; done
}

# abort_up <message> <log file>...: startup failed; show the logs, stop the nodes this script
# started, clean up, fail
abort_up() {
  local msg=$1
  shift
  log_tails "$@"
  stop_managed
  remove_node_dirs
  die "$msg"
}

# --- commands -----------------------------------------------------------------------------
cmd_up() {
  local t0=$SECONDS p pid pids health busy=()
  if cluster_ok; then
    if pids="$(managed_pids)"; then
      echo "redis-cluster: already running on $PORT_RANGE (started by this script, pids $pids)"
    else
      echo "redis-cluster: already running on $PORT_RANGE"
    fi
    return 0
  fi

  # Nodes of ours that are alive but not a healthy cluster (an interrupted up, a crashed node):
  # start over.
  if pids="$(managed_pids)"; then
    echo "redis-cluster: nodes started earlier (pids $pids) are not a healthy cluster, restarting them" >&2
    stop_managed
  fi
  for p in "${PORTS[@]}"; do
    rm -f "$(pid_file "$p")"
    if port_open "$p"; then
      health="$(node_health "$p")" || true
      busy+=("$p ($health)")
    fi
    port_open $((p + BUS_OFFSET)) && busy+=("$((p + BUS_OFFSET)) (cluster bus port of $p)")
  done
  if ((${#busy[@]} > 0)); then
    die "ports in use by something that is not a healthy Redis Cluster, not touching it: ${busy[*]}" \
      "(stop it, or use another base port: RANKER_REDIS_CLUSTER_PORT)"
  fi

  ensure_cmd redis-server redis-server
  ensure_cmd redis-cli redis-tools

  # clean start: a nodes.conf from an earlier run would make the nodes remember an old cluster
  remove_node_dirs
  rm -f "$CREATE_LOG"
  local dir log
  for p in "${PORTS[@]}"; do
    dir="$(node_dir "$p")"
    log="$(log_file "$p")"
    mkdir -p "$dir"
    : >"$log"
    # redis-server daemonizes itself (double fork, setsid) and writes the pidfile; it logs to
    # --logfile once daemonized, anything before that (bad option) lands in the same file.
    # shellcheck disable=SC2094
    if ! redis-server --bind "$HOST" --port "$p" --daemonize yes \
      --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 5000 \
      --save "" --appendonly no --dir "$dir" \
      --logfile "$log" --pidfile "$(pid_file "$p")" </dev/null >>"$log" 2>&1 9>&-; then
      abort_up "redis-server failed to start on $p" "$log"
    fi
  done

  local deadline=$((SECONDS + START_TIMEOUT))
  for p in "${PORTS[@]}"; do
    until ping_ok "$p" && managed_pid "$p" >/dev/null; do
      if ((SECONDS >= deadline)); then
        abort_up "node $p did not answer PING (or wrote no pidfile) within ${START_TIMEOUT}s (log: $(log_file "$p"))" \
          "$(log_file "$p")"
      fi
      sleep 0.2
    done
  done

  local addrs=()
  for p in "${PORTS[@]}"; do addrs+=("$HOST:$p"); done
  if ! timeout "$CLUSTER_TIMEOUT" redis-cli --cluster create "${addrs[@]}" --cluster-replicas 0 --cluster-yes \
    </dev/null >"$CREATE_LOG" 2>&1 9>&-; then
    # shellcheck disable=SC2046
    abort_up "redis-cli --cluster create failed (log: $CREATE_LOG)" "$CREATE_LOG" $(node_logs)
  fi

  deadline=$((SECONDS + CLUSTER_TIMEOUT))
  for p in "${PORTS[@]}"; do
    until health="$(node_health "$p")"; do
      if ((SECONDS >= deadline)); then
        # shellcheck disable=SC2046
        abort_up "node $p not healthy ${CLUSTER_TIMEOUT}s after cluster create: $health" \
          "$CREATE_LOG" $(node_logs)
      fi
      sleep 0.2
    done
  done
  record_started
  echo "redis-cluster: started $NODE_COUNT masters on $PORT_RANGE (pids $(managed_pids)) in $((SECONDS - t0)) s"
}

cmd_down() {
  local pids p open=0
  if pids="$(managed_pids)"; then
    stop_managed
    remove_node_dirs
    echo "redis-cluster: stopped (pids $pids)"
    return 0
  fi
  for p in "${PORTS[@]}"; do
    rm -f "$(pid_file "$p")"
    port_open "$p" && open=1
  done
  if ((open)); then
    echo "redis-cluster: not started by this script, leaving the Redis on $PORT_RANGE alone"
  else
    echo "redis-cluster: not running"
  fi
}

cmd_status() {
  local pids="" p health bad=() open=0 who
  if pids="$(managed_pids)"; then who="started by this script, pids $pids"; else who="not started by this script"; fi
  for p in "${PORTS[@]}"; do
    port_open "$p" && open=1
    health="$(node_health "$p")" || bad+=("$p: $health")
  done
  if ((${#bad[@]} == 0)); then
    echo "redis-cluster: running on $PORT_RANGE ($who; cluster_state:ok, $TOTAL_SLOTS slots assigned)"
    return 0
  fi
  if ((open == 0)) && [[ -z "$pids" ]]; then
    echo "redis-cluster: not running"
  else
    local details
    details="$(printf '; %s' "${bad[@]}")"
    echo "redis-cluster: not healthy on $PORT_RANGE ($who$details)"
  fi
  return 1
}

service_main 120 "$@"
