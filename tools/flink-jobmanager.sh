#!/usr/bin/env bash
# A Flink 1.19.0 JobManager (a standalone session cluster's master), from the jars tools/flink-job-server.sh
# fetched, in the foreground until SIGTERM/SIGINT, which stop it; it also stops if this script is killed (kill -9
# included). As a node of a cluster of several machines runs it (docs/scale-out.md#a-cluster):
#   tools/flink-jobmanager.sh JOB_SERVER_DIR WORK_DIR [--bind ADDRESS] [--rpc-port N] [--blob-port N]
#                             [--rest-port N] [--memory SIZE]
# --bind: the address it listens on and that TaskManagers and `--flink_master` reach (default 127.0.0.1);
# ports (default Flink's: RPC 6123, blob 6124, REST 8081) are fixed, so a firewall can allow them; --memory: the
# JVM's process size (default 1024m). WORK_DIR gets conf-jobmanager/flink-conf.yaml, jobmanager.log,
# jobmanager.pid, tmp/ and jobmanager.lock: a second JobManager on the same WORK_DIR is refused in one line
# before anything there is touched.
set -euo pipefail
script=flink-jobmanager.sh role=jobmanager
[ $# -ge 2 ] || { echo "usage: tools/$script JOB_SERVER_DIR WORK_DIR [--bind ADDRESS] [--rpc-port N] [--blob-port N] [--rest-port N] [--memory SIZE]" >&2; exit 2; }
home="$1" work="$2"
shift 2
bind=127.0.0.1 rpc=6123 blob=6124 rest=8081 memory=1024m
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || { echo "error: $script: $1 needs a value" >&2; exit 2; }
  case "$1" in
    --bind) bind="$2" ;;
    --rpc-port) rpc="$2" ;;
    --blob-port) blob="$2" ;;
    --rest-port) rest="$2" ;;
    --memory) memory="$2" ;;
    *) echo "error: $script: unknown option $1" >&2; exit 2 ;;
  esac
  shift 2
done
ports=(--rpc-port "$rpc" --blob-port "$blob" --rest-port "$rest")
# Flink's REST handler hands a submitted job's files to the blob server at localhost:BLOB_PORT
# (JobSubmitHandler: "Could not connect to BlobServer at address localhost/127.0.0.1:6124" when the JobManager
# listened only on another address; tests/e2e/test_hosts.py), so off loopback the RPC and blob ports listen on
# every address of the host, loopback included (a firewall keeps them to the cluster's hosts)
listen="$bind"
[ "$bind" = 127.0.0.1 ] || listen=0.0.0.0
# shellcheck source=tools/flink-node.sh
source "$(dirname "$0")/flink-node.sh"
{
  cat <<CONF
jobmanager.rpc.address: $bind
jobmanager.bind-host: $listen
jobmanager.rpc.port: $rpc
blob.server.port: $blob
rest.address: $bind
rest.bind-address: $bind
rest.port: $rest
jobmanager.memory.process.size: $memory
# a job's slots spread over the TaskManagers (Flink's default fills one first): with several hosts each does
# its share, and a lost host takes only its share of a job's tasks (tests/e2e/test_hosts.py)
cluster.evenly-spread-out-slots: true
CONF
  common_conf
} >"$conf/flink-conf.yaml"
stop_with_this_script
: >"$work/jobmanager.log"
start_jvm org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint GET_JM_RESOURCE_PARAMS "$work/jobmanager.log"
status=0
wait "$jvm" || status=$?
[ -n "$stopping" ] || echo "flink-jobmanager: the JobManager (pid $jvm) exited with status $status (log: $work/jobmanager.log)" >&2
exit 1
