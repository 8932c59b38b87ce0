#!/usr/bin/env bash
# A Spark 3.2.2 standalone cluster on 127.0.0.1: one master and one worker (2 cores, 2 GiB for executors), from
# the jars tools/spark-job-server.sh fetched (JOB_SERVER_DIR, laid out as a Spark home), in the foreground until
# SIGTERM/SIGINT, which stop both (the worker stops the executors it launched).
# Usage: tools/spark-cluster.sh JOB_SERVER_DIR WORK_DIR MASTER_PORT UI_PORT
# `--spark_master_url` is spark://127.0.0.1:MASTER_PORT; the master's web UI (and its JSON at /json/) is
# http://127.0.0.1:UI_PORT; the worker's ports are any free ones. WORK_DIR gets the logs (master.log,
# worker.log), the processes' ids (master.pid, worker.pid) and the executors' folders and logs (work/).
# Every process binds 127.0.0.1 (SPARK_LOCAL_IP); give the job server the same (`SPARK_LOCAL_IP=127.0.0.1
# incoherent ... --runner SparkRunner`), else its driver binds the machine's address.
set -euo pipefail
home="$1" work="$2" port="$3" ui="$4"
mkdir -p "$work/work"
export SPARK_HOME="$home" SPARK_SCALA_VERSION=2.12 SPARK_LOCAL_IP=127.0.0.1
cp="$home/jars/*"
read -r -a opens <"$home/conf/java-opts"
pids=()
stop() { trap - TERM INT EXIT; kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; }
trap stop EXIT
trap 'stop; exit 143' TERM
trap 'stop; exit 130' INT
java -Xmx512m "${opens[@]}" -cp "$cp" org.apache.spark.deploy.master.Master \
  --host 127.0.0.1 --port "$port" --webui-port "$ui" >"$work/master.log" 2>&1 &
pids+=($!) && echo $! >"$work/master.pid"
java -Xmx512m "${opens[@]}" -cp "$cp" org.apache.spark.deploy.worker.Worker --host 127.0.0.1 --cores 2 \
  --memory 2g --webui-port 0 --work-dir "$work/work" "spark://127.0.0.1:$port" >"$work/worker.log" 2>&1 &
pids+=($!) && echo $! >"$work/worker.pid"
wait "${pids[0]}"  # the cluster lives as long as its master
