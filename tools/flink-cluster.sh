#!/usr/bin/env bash
# A Flink 1.19.0 session cluster on 127.0.0.1: one JobManager and one TaskManager with 2 task slots, from the
# jars tools/flink-job-server.sh fetched (DIR/lib), in the foreground until SIGTERM/SIGINT, which stop both.
# Usage: tools/flink-cluster.sh JOB_SERVER_DIR WORK_DIR REST_PORT
# WORK_DIR gets the configuration (conf/flink-conf.yaml), the logs (jobmanager.log, taskmanager.log) and the
# processes' ids (jobmanager.pid, taskmanager.pid: the TaskManager running now). The REST API (and
# `--flink_master`) is 127.0.0.1:REST_PORT; the JobManager's RPC port is a free one, the others any free one.
# Faults: the script supervises its TaskManager as systemd's Restart=always or a Kubernetes Deployment does in a
# standalone deployment: a TaskManager that dies (killed, out of memory) is started again after 2 s (at most
# $MAX_RESTARTS times; its log is appended to taskmanager.log), and the JobManager's restart strategy,
# fixed-delay, 3 attempts 2 s apart, reruns the failed job on it once it has registered (heartbeats every 2 s:
# a lost TaskManager is noticed in seconds). docs/scale-out.md#faults.
set -euo pipefail
home="$1" work="$2" rest="$3"
mkdir -p "$work/conf" "$work/tmp"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
rpc=$(free_port)  # the TaskManager finds the JobManager at this port: a fixed one, free now
cat >"$work/conf/flink-conf.yaml" <<CONF
jobmanager.rpc.address: 127.0.0.1
jobmanager.bind-host: 127.0.0.1
jobmanager.rpc.port: $rpc
rest.address: 127.0.0.1
rest.bind-address: 127.0.0.1
rest.port: $rest
taskmanager.host: 127.0.0.1
taskmanager.bind-host: 127.0.0.1
taskmanager.rpc.port: 0
blob.server.port: 0
taskmanager.numberOfTaskSlots: 2
parallelism.default: 2
jobmanager.memory.process.size: 1024m
taskmanager.memory.process.size: 2048m
# a Beam job is many chained operators: the default 128 MiB of network buffers is too few at parallelism 2
taskmanager.memory.network.min: 256mb
taskmanager.memory.network.max: 256mb
# a blocking exchange (Flink makes one where branches of a Beam job meet again) is sort-based in Flink 1.19
# and takes at least this many 32 KiB buffers while it is written: Flink's default, 512 (16 MiB), times
# the dozens of such exchanges of incoherent probes (eight outputs) at once is more than the 256 MiB above
taskmanager.network.sort-shuffle.min-buffers: 64
io.tmp.dirs: $work/tmp
restart-strategy.type: fixed-delay
restart-strategy.fixed-delay.attempts: 3
restart-strategy.fixed-delay.delay: 2 s
heartbeat.interval: 2000
heartbeat.timeout: 20000
# deploying a Beam job's ~150 tasks at once on 2 busy cores takes the TaskManager longer than the default 10 s
pekko.ask.timeout: 60 s
CONF
cp="$home/lib/*"
params() {  # Flink's own memory arithmetic (what its bin/ scripts call): JVM flags, then dynamic properties
  java -cp "$cp" org.apache.flink.runtime.util.bash.BashJavaUtils "$1" --configDir "$work/conf" 2>/dev/null \
    | sed -n 's/^BASH_JAVA_UTILS_EXEC_RESULT://p'
}
mapfile -t jm_params < <(params GET_JM_RESOURCE_PARAMS)
mapfile -t tm_params < <(params GET_TM_RESOURCE_PARAMS)
MAX_RESTARTS=5
jm="" tm="" stopping=""
stop() {
  trap - TERM INT EXIT
  stopping=1
  kill "$jm" "$tm" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap stop EXIT
trap 'stop; exit 143' TERM
trap 'stop; exit 130' INT
start_taskmanager() {
  # shellcheck disable=SC2086  # the JVM flags and dynamic properties are words
  java ${tm_params[0]} -cp "$cp" org.apache.flink.runtime.taskexecutor.TaskManagerRunner \
    --configDir "$work/conf" ${tm_params[1]} >>"$work/taskmanager.log" 2>&1 &
  tm=$!
  echo "$tm" >"$work/taskmanager.pid"
}
# shellcheck disable=SC2086
java ${jm_params[0]} -cp "$cp" org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint \
  --configDir "$work/conf" ${jm_params[1]} >"$work/jobmanager.log" 2>&1 &
jm=$!
echo "$jm" >"$work/jobmanager.pid"
: >"$work/taskmanager.log"
start_taskmanager
restarts=0
while true; do  # the cluster lives as long as its JobManager; a TaskManager that dies is started again
  status=0
  wait -n "$jm" "$tm" || status=$?
  [ -z "$stopping" ] || break
  if ! kill -0 "$jm" 2>/dev/null; then
    echo "flink-cluster: the JobManager (pid $jm) exited; stopping (logs in $work)" >&2
    kill "$tm" 2>/dev/null || true
    wait 2>/dev/null || true
    exit 1
  fi
  if ! kill -0 "$tm" 2>/dev/null; then
    if [ "$restarts" -ge "$MAX_RESTARTS" ]; then
      echo "flink-cluster: the TaskManager died $((restarts + 1)) times; stopping (logs in $work)" >&2
      exit 1
    fi
    restarts=$((restarts + 1))
    echo "flink-cluster: the TaskManager (pid $tm) exited with status $status; starting another ($restarts of $MAX_RESTARTS)" >&2
    echo "=== flink-cluster: TaskManager pid $tm exited with status $status; restart $restarts" >>"$work/taskmanager.log"
    sleep 2
    start_taskmanager
  fi
done
