#!/usr/bin/env bash
# A Flink 1.19.0 session cluster on one host: tools/flink-jobmanager.sh and tools/flink-taskmanager.sh (one
# TaskManager, 2 task slots) together on 127.0.0.1, from the jars tools/flink-job-server.sh fetched, in the
# foreground until SIGTERM/SIGINT, which stop both; both also stop if this script is killed (kill -9 included).
# Usage: tools/flink-cluster.sh JOB_SERVER_DIR WORK_DIR REST_PORT
# The REST API (and `--flink_master`) is 127.0.0.1:REST_PORT; the JobManager's RPC port is a free one, chosen
# when it starts, the other ports (blob, TaskManager RPC and data) any free one. WORK_DIR gets both nodes' files (the
# configurations conf-jobmanager/ and conf-taskmanager/, jobmanager.log, taskmanager.log, jobmanager.pid,
# taskmanager.pid: the TaskManager running now); a second cluster on a WORK_DIR whose cluster runs is refused in
# one line before anything there is touched. A TaskManager that dies is started again (tools/flink-taskmanager.sh,
# docs/scale-out.md#faults). A cluster of several machines runs the two scripts on its nodes
# (docs/scale-out.md#a-cluster).
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: tools/flink-cluster.sh JOB_SERVER_DIR WORK_DIR REST_PORT" >&2; exit 2; }
home="$1" work="$2" rest="$3"
tools="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$work"
exec 9>>"$work/cluster.lock"
if ! flock -n 9; then
  echo "error: $work: a Flink cluster started by tools/flink-cluster.sh runs there (JobManager pid $(cat "$work/jobmanager.pid" 2>/dev/null || echo '?')); stop it, or give another work folder" >&2
  exit 1
fi
# the TaskManager finds the JobManager at its RPC port: a fixed one, free now; the others any free one (0)
jm_rpc=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
blob=0 tm_rpc=0 data=0
jm="" tm="" stopping=""
stop() {
  trap - TERM INT EXIT
  stopping=1
  kill $jm $tm 2>/dev/null || true
  wait 2>/dev/null || true
}
trap stop EXIT
trap 'stop; exit 143' TERM
trap 'stop; exit 130' INT
python3 -S "$tools/die-with-parent.py" $$ bash "$tools/flink-jobmanager.sh" "$home" "$work" --bind 127.0.0.1 \
  --rpc-port "$jm_rpc" --blob-port "$blob" --rest-port "$rest" 9>&- &
jm=$!
python3 -S "$tools/die-with-parent.py" $$ bash "$tools/flink-taskmanager.sh" "$home" "$work" --bind 127.0.0.1 \
  --jobmanager "127.0.0.1:$jm_rpc" --rpc-port "$tm_rpc" --data-port "$data" --slots 2 9>&- &
tm=$!
status=0
wait -n "$jm" "$tm" || status=$?  # the cluster lives as long as both nodes' scripts
[ -n "$stopping" ] || echo "flink-cluster: a node's script exited with status $status; stopping (logs in $work)" >&2
exit 1
