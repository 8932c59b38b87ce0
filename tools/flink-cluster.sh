#!/usr/bin/env bash
# A Flink 1.19.0 session cluster on 127.0.0.1: one JobManager and one TaskManager with 2 task slots, from the
# jars tools/flink-job-server.sh fetched (DIR/lib), in the foreground until SIGTERM/SIGINT, which stop both.
# Usage: tools/flink-cluster.sh JOB_SERVER_DIR WORK_DIR REST_PORT
# WORK_DIR gets the configuration (conf/flink-conf.yaml), the logs (jobmanager.log, taskmanager.log) and the
# processes' ids (jobmanager.pid, taskmanager.pid). The REST API (and `--flink_master`) is 127.0.0.1:REST_PORT;
# the JobManager's RPC port is a free one, the others any free one. Restart strategy: fixed-delay, 3 attempts, 2 s apart (a lost TaskManager's
# tasks are retried on the TaskManager that is left, or on one that registers again).
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
# the dozens of such exchanges of `incoherent probes` (eight outputs) at once is more than the 256 MiB above
taskmanager.network.sort-shuffle.min-buffers: 64
io.tmp.dirs: $work/tmp
restart-strategy.type: fixed-delay
restart-strategy.fixed-delay.attempts: 3
restart-strategy.fixed-delay.delay: 2 s
heartbeat.timeout: 20000
# deploying a Beam job's ~150 tasks at once on 2 busy cores takes the TaskManager longer than the default 10 s
pekko.ask.timeout: 60 s
CONF
cp="$home/lib/*"
params() {  # Flink's own memory arithmetic (what its bin/ scripts call): JVM flags, then dynamic properties
  java -cp "$cp" org.apache.flink.runtime.util.bash.BashJavaUtils "$1" --configDir "$work/conf" 2>/dev/null \
    | sed -n 's/^BASH_JAVA_UTILS_EXEC_RESULT://p'
}
mapfile -t jm < <(params GET_JM_RESOURCE_PARAMS)
mapfile -t tm < <(params GET_TM_RESOURCE_PARAMS)
pids=()
stop() { trap - TERM INT EXIT; kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; }
trap stop EXIT
trap 'stop; exit 143' TERM
trap 'stop; exit 130' INT
# shellcheck disable=SC2086  # the JVM flags and dynamic properties are words
java ${jm[0]} -cp "$cp" org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint \
  --configDir "$work/conf" ${jm[1]} >"$work/jobmanager.log" 2>&1 &
pids+=($!) && echo $! >"$work/jobmanager.pid"
# shellcheck disable=SC2086
java ${tm[0]} -cp "$cp" org.apache.flink.runtime.taskexecutor.TaskManagerRunner \
  --configDir "$work/conf" ${tm[1]} >"$work/taskmanager.log" 2>&1 &
pids+=($!) && echo $! >"$work/taskmanager.pid"
wait "${pids[0]}"  # the cluster lives as long as its JobManager (a lost TaskManager is a fault to survive)
