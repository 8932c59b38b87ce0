#!/usr/bin/env bash
# A Flink 1.19.0 TaskManager of the JobManager at JOBMANAGER (tools/flink-jobmanager.sh), from the jars
# tools/flink-job-server.sh fetched, in the foreground until SIGTERM/SIGINT, which stop it; it also stops if this
# script is killed (kill -9 included). As a worker node of a cluster of several machines runs it:
#   tools/flink-taskmanager.sh JOB_SERVER_DIR WORK_DIR --jobmanager HOST[:RPC_PORT] [--bind ADDRESS]
#                              [--rpc-port N] [--data-port N] [--slots N] [--memory SIZE]
# --jobmanager: the JobManager's address and RPC port (default 6123); --bind: the address this node listens on
# and the JobManager and other TaskManagers reach it at (default 127.0.0.1); ports (default RPC 6122, data 6121)
# are fixed, so a firewall can allow them; --slots: task slots (default 2: one per core is the usual choice);
# --memory: the JVM's process size (default 2048m; docs/scale-out.md#a-cluster). WORK_DIR gets
# conf-taskmanager/flink-conf.yaml, taskmanager.log, taskmanager.pid, tmp/ and taskmanager.lock (a second
# TaskManager on the same WORK_DIR is refused in one line before anything there is touched).
# Faults: the script supervises its TaskManager as systemd's Restart=always or a Kubernetes Deployment does in a
# standalone deployment: a TaskManager that dies (killed, out of memory) is started again after 2 s (at most
# $MAX_RESTARTS times; its log is appended to taskmanager.log), and the JobManager's restart strategy reruns the
# failed job on it once it has registered. docs/scale-out.md#faults.
set -euo pipefail
script=flink-taskmanager.sh role=taskmanager
usage="usage: tools/$script JOB_SERVER_DIR WORK_DIR --jobmanager HOST[:RPC_PORT] [--bind ADDRESS] [--rpc-port N] [--data-port N] [--slots N] [--memory SIZE]"
[ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
home="$1" work="$2"
shift 2
jobmanager="" bind=127.0.0.1 rpc=6122 data=6121 slots=2 memory=2048m
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || { echo "error: $script: $1 needs a value" >&2; exit 2; }
  case "$1" in
    --jobmanager) jobmanager="$2" ;;
    --bind) bind="$2" ;;
    --rpc-port) rpc="$2" ;;
    --data-port) data="$2" ;;
    --slots) slots="$2" ;;
    --memory) memory="$2" ;;
    *) echo "error: $script: unknown option $1" >&2; exit 2 ;;
  esac
  shift 2
done
[ -n "$jobmanager" ] || { echo "error: $script: --jobmanager HOST[:RPC_PORT] is needed" >&2; exit 2; }
jm_host="${jobmanager%:*}" jm_rpc=6123
[ "$jm_host" = "$jobmanager" ] || jm_rpc="${jobmanager##*:}"
[[ "$slots" =~ ^[1-9][0-9]*$ ]] || { echo "error: $script: --slots $slots: not a positive number" >&2; exit 2; }
ports=(--rpc-port "$rpc" --data-port "$data" --jobmanager "$jm_rpc")
# shellcheck source=tools/flink-node.sh
source "$(dirname "$0")/flink-node.sh"
{
  cat <<CONF
jobmanager.rpc.address: $jm_host
jobmanager.rpc.port: $jm_rpc
taskmanager.host: $bind
taskmanager.bind-host: $bind
taskmanager.rpc.port: $rpc
taskmanager.data.port: $data
taskmanager.numberOfTaskSlots: $slots
taskmanager.memory.process.size: $memory
CONF
  common_conf
} >"$conf/flink-conf.yaml"
MAX_RESTARTS=5
stop_with_this_script
: >"$work/taskmanager.log"
main=org.apache.flink.runtime.taskexecutor.TaskManagerRunner
start_jvm "$main" GET_TM_RESOURCE_PARAMS "$work/taskmanager.log"
restarts=0
while true; do  # a TaskManager that dies is started again
  status=0
  wait "$jvm" || status=$?
  [ -z "$stopping" ] || break
  if [ "$restarts" -ge "$MAX_RESTARTS" ]; then
    echo "flink-taskmanager: the TaskManager died $((restarts + 1)) times; stopping (log: $work/taskmanager.log)" >&2
    exit 1
  fi
  restarts=$((restarts + 1))
  echo "flink-taskmanager: the TaskManager (pid $jvm) exited with status $status; starting another ($restarts of $MAX_RESTARTS)" >&2
  echo "=== flink-taskmanager: TaskManager pid $jvm exited with status $status; restart $restarts" >>"$work/taskmanager.log"
  sleep 2
  start_jvm "$main" GET_TM_RESOURCE_PARAMS "$work/taskmanager.log"
done
