#!/usr/bin/env bash
# Single-node Apache Kafka broker (KRaft, combined broker+controller) for the tests.
#
#   test/services/kafka.sh up|down|status
#
# up      If something already answers on 127.0.0.1:9092, do nothing. Otherwise fetch the
#         broker jars from Maven Central (test/services/kafka/pom.xml, cached per version in
#         the state dir), write server.properties, format fresh storage and start kafka.Kafka
#         in the background; wait until it serves metadata.
# down    Stop the broker this script started (pidfile): SIGTERM, then SIGKILL after a timeout.
#         A broker this script did not start is never touched.
# status  Print what runs on 9092; exit 0 if something answers there, 1 otherwise.
#
# Env: RANKER_SERVICES_DIR   state dir (default <repo>/.services): jars, config, data, logs, pidfile
#      RANKER_KAFKA_VERSION  broker version override (default: <kafka.version> in kafka/pom.xml)
#      RANKER_KAFKA_START_TIMEOUT  seconds to wait for the broker (default 90)
#      RANKER_KAFKA_HEAP     JVM heap (default 512m)
#      RANKER_SERVICES_STARTED_LOG  if set, "kafka" is appended to this file when `up` starts it
set -euo pipefail

SERVICE=kafka
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR source=service-lib.sh
source "$SCRIPT_DIR/service-lib.sh" # STATE_DIR, die, ensure_cmd, port_open, stop_pids, service_main
POM="$SCRIPT_DIR/kafka/pom.xml"

HOST=127.0.0.1
PORT=9092
CONTROLLER_PORT=9093
NODE_ID=1
START_TIMEOUT="${RANKER_KAFKA_START_TIMEOUT:-90}"
STOP_TIMEOUT=30
HEAP="${RANKER_KAFKA_HEAP:-512m}"

pom_version() {
  sed -n 's:.*<kafka\.version>[[:space:]]*\([^<[:space:]]*\)[[:space:]]*</kafka\.version>.*:\1:p' "$POM" | head -n 1
}
KAFKA_VERSION="${RANKER_KAFKA_VERSION:-$(pom_version)}"
[[ -n "$KAFKA_VERSION" ]] || { echo "kafka: cannot read <kafka.version> from $POM" >&2; exit 1; }

LIBS_DIR="$STATE_DIR/kafka-libs-$KAFKA_VERSION"
RUN_DIR="$STATE_DIR/kafka"            # config + data of the running broker (recreated on every up)
DATA_DIR="$RUN_DIR/data"
CONFIG="$RUN_DIR/server.properties"
LOG4J_CONFIG="$RUN_DIR/log4j2.properties"
LOG_FILE="$STATE_DIR/kafka.log"
MVN_LOG="$STATE_DIR/kafka-mvn.log"
PID_FILE="$STATE_DIR/kafka.pid"
INFO_FILE="$STATE_DIR/kafka.info"     # version / cluster id / pid of the broker this script started
LOCK_FILE="$STATE_DIR/kafka.lock"

# --- probes (port_open: service-lib.sh) --------------------------------------------------
# kafka_request <request bytes (printf escapes, without the size prefix)> <response bytes to read>
# Sends one Kafka request over bash /dev/tcp and prints the first response bytes as decimals.
kafka_request() {
  local body=$1 n=$2 len size
  # shellcheck disable=SC2059 # body holds printf escapes on purpose
  len=$(printf "$body" | wc -c)
  size=$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $((len >> 24 & 255)) $((len >> 16 & 255)) $((len >> 8 & 255)) $((len & 255)))
  # shellcheck disable=SC2016 # expanded by the inner bash
  timeout 5 bash -c '
    exec 3<>"/dev/tcp/$0/$1" || exit 1
    printf "$2" >&3
    head -c "$3" <&3 | od -An -v -tu1
  ' "$HOST" "$PORT" "$size$body" "$n" 2>/dev/null
}

# Metadata v7 (api 3), correlation id 7, client "probe", topics=[] , no auto-creation.
# Response: size(4) correlation_id(4) throttle_time_ms(4) brokers.count(4) brokers[0].node_id(4).
# Succeeds (printing "<broker count> <first node id>") if the broker lists at least one broker.
metadata_probe() {
  kafka_request '\x00\x03\x00\x07\x00\x00\x00\x07\x00\x05probe\x00\x00\x00\x00\x00' 20 | awk '
    { for (i = 1; i <= NF; i++) b[n++] = $i }
    END {
      if (n < 20) exit 1
      corr = b[4]*16777216 + b[5]*65536 + b[6]*256 + b[7]
      cnt  = b[12]*16777216 + b[13]*65536 + b[14]*256 + b[15]
      node = b[16]*16777216 + b[17]*65536 + b[18]*256 + b[19]
      if (corr != 7 || cnt < 1 || cnt > 1000) exit 1
      print cnt, node
    }'
}

# FindCoordinator v2 (api 10), correlation id 8, key "probe", key_type 0 (group).
# Response: size(4) correlation_id(4) throttle_time_ms(4) error_code(2).
# The first call makes the broker create __consumer_offsets; succeeds once the group
# coordinator is available, so the first consumer group of a test does not have to retry.
coordinator_probe() {
  kafka_request '\x00\x0a\x00\x02\x00\x00\x00\x08\x00\x05probe\x00\x05probe\x00' 14 | awk '
    { for (i = 1; i <= NF; i++) b[n++] = $i }
    END {
      if (n < 14) exit 1
      corr = b[4]*16777216 + b[5]*65536 + b[6]*256 + b[7]
      err  = b[12]*256 + b[13]
      if (corr != 8 || err != 0) exit 1
    }'
}

# pid of the broker this script started, if it is still alive (verified via its command line)
managed_pid() { pidfile_pid "$PID_FILE" 'kafka\.Kafka'; }

info_value() { # info_value <key>
  [[ -f "$INFO_FILE" ]] && sed -n "s/^$1=//p" "$INFO_FILE" | head -n 1
}

log_tail() {
  if [[ -f "$LOG_FILE" ]]; then show_log "$LOG_FILE" 40; fi
}

check_java() { # Kafka 4.x brokers need Java 17+
  local v major
  v="$(java -version 2>&1 | sed -n 's/.* version "\([^"]*\)".*/\1/p' | head -n 1)"
  major="${v%%.*}"
  [[ "$major" == 1 ]] && major="$(echo "$v" | cut -d. -f2)"
  [[ "$major" =~ ^[0-9]+$ ]] || return 0 # unknown format: let the JVM speak for itself
  ((major >= 17)) || die "Java $v found, the Kafka broker needs Java 17 or newer (apt-get install openjdk-17-jre-headless)"
}

# --- jars ---------------------------------------------------------------------------------
fetch_libs() {
  [[ -f "$LIBS_DIR/.complete" ]] && return 0
  ensure_cmd mvn maven
  local tmp="$LIBS_DIR.tmp.$$"
  rm -rf "$tmp"
  if ! mvn -q -B -Dstyle.color=never -f "$POM" -Dkafka.version="$KAFKA_VERSION" \
    dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$tmp" >"$MVN_LOG" 2>&1; then
    rm -rf "$tmp"
    grep -v '^\[ERROR\] *$' "$MVN_LOG" | sed 's/\x1b\[[0-9;]*m//g' | grep -m 5 -e ERROR -e 'Could not' >&2 || true
    die "mvn could not fetch kafka_2.13 $KAFKA_VERSION (full output: $MVN_LOG)"
  fi
  [[ -f "$tmp/kafka_2.13-$KAFKA_VERSION.jar" ]] || { rm -rf "$tmp"; die "kafka_2.13-$KAFKA_VERSION.jar missing after mvn"; }
  touch "$tmp/.complete"
  rm -rf "$LIBS_DIR"
  mv "$tmp" "$LIBS_DIR"
}

# --- config -------------------------------------------------------------------------------
write_config() {
  rm -rf "$RUN_DIR"
  mkdir -p "$DATA_DIR"
  cat >"$CONFIG" <<EOF
# Generated by test/services/kafka.sh for Kafka $KAFKA_VERSION - do not edit.
process.roles=broker,controller
node.id=$NODE_ID
controller.quorum.voters=$NODE_ID@$HOST:$CONTROLLER_PORT
listeners=PLAINTEXT://$HOST:$PORT,CONTROLLER://$HOST:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://$HOST:$PORT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
log.dirs=$DATA_DIR

num.network.threads=2
num.io.threads=2
background.threads=2
num.recovery.threads.per.data.dir=1

num.partitions=1
default.replication.factor=1
min.insync.replicas=1
auto.create.topics.enable=true
delete.topic.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0

log.retention.ms=3600000
log.retention.bytes=67108864
log.segment.bytes=16777216
log.retention.check.interval.ms=60000
EOF
  cat >"$LOG4J_CONFIG" <<'EOF'
status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
logger.statechange.name = state.change.logger
logger.statechange.level = WARN
logger.request.name = kafka.request.logger
logger.request.level = WARN
logger.zk.name = org.apache.zookeeper
logger.zk.level = WARN
EOF
}

jvm_opts() { # the broker's JVM flags (small heap: CI machines have 2 cores)
  JVM_OPTS=(-Xms128m "-Xmx$HEAP" -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExitOnOutOfMemoryError
    -Djava.awt.headless=true "-Dlog4j2.configurationFile=$LOG4J_CONFIG" "-Dkafka.logs.dir=$STATE_DIR"
    -cp "$LIBS_DIR/*")
}

# --- commands -----------------------------------------------------------------------------
cmd_up() {
  local t0=$SECONDS pid
  if pid="$(managed_pid)" && metadata_probe >/dev/null; then
    echo "kafka: already running on $PORT (started by this script, pid $pid, $(info_value version))"
    return 0
  fi
  if port_open "$PORT"; then
    if pid="$(managed_pid)"; then
      : # our broker is still starting (e.g. a concurrent up); wait for it below
    elif metadata_probe >/dev/null; then
      echo "kafka: already running on $PORT"
      return 0
    else
      echo "kafka: port $PORT is already in use (it does not answer a Kafka Metadata request yet); not starting a broker" >&2
      return 0
    fi
  else
    if pid="$(managed_pid)"; then
      # our process is alive but not listening: stuck or half-dead; restart it
      stop_pid "$pid"
    fi
    rm -f "$PID_FILE" "$INFO_FILE"
    port_open "$CONTROLLER_PORT" && die "port $CONTROLLER_PORT (controller) is in use by another process"
    ensure_cmd java default-jre-headless
    check_java
    fetch_libs
    write_config

    local cluster_id
    # random 16-byte id, base64url without padding (like `kafka-storage random-uuid`, which
    # also avoids a leading '-' that the argument parser would take for an option)
    cluster_id=-
    while [[ "$cluster_id" == -* ]]; do
      cluster_id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
    done
    : >"$LOG_FILE"
    jvm_opts
    if ! java "${JVM_OPTS[@]}" -XX:TieredStopAtLevel=1 kafka.tools.StorageTool format --config "$CONFIG" --cluster-id "$cluster_id" \
      >>"$LOG_FILE" 2>&1 </dev/null; then
      log_tail
      die "StorageTool format failed (Kafka $KAFKA_VERSION)"
    fi

    # setsid: the broker must not get the caller's Ctrl-C / SIGHUP. No fd of ours may stay open
    # in it: callers may capture our output through a pipe, and fd 9 holds the lock.
    setsid java "${JVM_OPTS[@]}" kafka.Kafka "$CONFIG" </dev/null >>"$LOG_FILE" 2>&1 9>&- &
    pid=$!
    echo "$pid" >"$PID_FILE"
    printf 'version=%s\ncluster_id=%s\npid=%s\nport=%s\nlibs=%s\n' \
      "$KAFKA_VERSION" "$cluster_id" "$pid" "$PORT" "$LIBS_DIR" >"$INFO_FILE"
  fi

  local deadline=$((SECONDS + START_TIMEOUT))
  until metadata_probe >/dev/null && coordinator_probe; do
    if ! kill -0 "$pid" 2>/dev/null; then
      log_tail
      rm -f "$PID_FILE"
      die "broker (pid $pid) exited during startup (Kafka $(info_value version); log: $LOG_FILE)"
    fi
    if ((SECONDS >= deadline)); then
      log_tail
      stop_pid "$pid"
      rm -f "$PID_FILE" "$INFO_FILE"
      die "broker (pid $pid) did not serve metadata on $HOST:$PORT within ${START_TIMEOUT}s, stopped it (log: $LOG_FILE)"
    fi
    sleep 0.5
  done
  record_started
  echo "kafka: started $(info_value version) on $PORT in $((SECONDS - t0)) s"
}

stop_pid() { # stop_pid <pid>: SIGTERM, wait, SIGKILL
  stop_pids pid "$STOP_TIMEOUT" 0.2 0.5 "$1"
}

cmd_down() {
  local pid
  if pid="$(managed_pid)"; then
    stop_pid "$pid"
    rm -f "$PID_FILE" "$INFO_FILE"
    rm -rf "$DATA_DIR"
    echo "kafka: stopped (pid $pid)"
  else
    rm -f "$PID_FILE" "$INFO_FILE"
    if port_open "$PORT"; then
      echo "kafka: not started by this script, leaving the broker on $PORT alone"
    else
      echo "kafka: not running"
    fi
  fi
}

cmd_status() {
  local pid probe
  if pid="$(managed_pid)"; then
    if probe="$(metadata_probe)"; then
      echo "kafka: running on $PORT (started by this script, pid $pid, $(info_value version), brokers/node: $probe)"
      return 0
    fi
    echo "kafka: pid $pid (started by this script, $(info_value version)) is alive but not serving on $PORT"
    return 1
  fi
  if port_open "$PORT"; then
    if probe="$(metadata_probe)"; then
      echo "kafka: running on $PORT (not started by this script; brokers/node: $probe)"
    else
      echo "kafka: port $PORT is open but does not answer a Kafka Metadata request"
    fi
    return 0
  fi
  echo "kafka: not running"
  return 1
}

# lock wait: a concurrent up may take a while (jar download, broker start)
service_main 300 "$@"
