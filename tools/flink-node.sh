# Shared by tools/flink-jobmanager.sh and tools/flink-taskmanager.sh (sourced, not run): the work folder's lock,
# the settings every node of these clusters needs, Flink's memory arithmetic, and a JVM that dies with its script.
# Expects: role (jobmanager|taskmanager), home (JOB_SERVER_DIR), work (WORK_DIR), script (the caller's name).
tools_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
usage_error() { echo "error: $script: $1" >&2; exit 2; }
# Expects too: ports, the caller's port options and their values (--rpc-port 6123 ...), checked first
set -- "${ports[@]}"
while [ $# -gt 0 ]; do
  [[ "$2" =~ ^[0-9]+$ ]] && [ "$2" -le 65535 ] || usage_error "$1 $2: not a port number"
  shift 2
done
[ -f "$home/lib/flink-runtime-1.19.0.jar" ] ||
  usage_error "$home: no Flink 1.19.0 jars in $home/lib (fetch them with tools/flink-job-server.sh $home)"
# One node per work folder: a second start is refused in one line before anything there is touched (its
# configuration, log and pid file belong to the node that runs). The lock is held by this script and the JVM
# (which inherits it): it goes when both are gone.
mkdir -p "$work"
exec 9>>"$work/$role.lock"
if ! flock -n 9; then
  echo "error: $work: a Flink $role started by tools/$script runs there (pid $(cat "$work/$role.pid" 2>/dev/null || echo '?')); stop it, or give another work folder" >&2
  exit 1
fi
conf="$work/conf-$role"
mkdir -p "$conf" "$work/tmp"
common_conf() {  # what every node of these clusters needs (docs/scale-out.md#flink: the reasons)
  cat <<CONF
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
}
cp="$home/lib/*"
params() {  # Flink's own memory arithmetic (what its bin/ scripts call): JVM flags, then dynamic properties
  java -cp "$cp" org.apache.flink.runtime.util.bash.BashJavaUtils "$1" --configDir "$conf" 2>/dev/null \
    | sed -n 's/^BASH_JAVA_UTILS_EXEC_RESULT://p'
}
jvm=""
start_jvm() {  # MAIN_CLASS PARAMS_KIND LOG APPEND: the node's JVM, in the background, ending with this script
  local main="$1" kind="$2" log="$3"
  local p
  mapfile -t p < <(params "$kind")
  [ "${#p[@]}" -ge 2 ] || { echo "error: $script: Flink's BashJavaUtils computed no memory settings from $conf/flink-conf.yaml" >&2; exit 1; }
  # shellcheck disable=SC2086  # the JVM flags and dynamic properties are words
  python3 -S "$tools_dir/die-with-parent.py" $$ java ${p[0]} -cp "$cp" "$main" --configDir "$conf" ${p[1]} >>"$log" 2>&1 &
  jvm=$!
  echo "$jvm" >"$work/$role.pid"
}

stopping=""
stop() {  # the node's JVM ($jvm) stopped and waited for; $stopping tells the script's loop it was asked to end
  trap - TERM INT EXIT
  stopping=1
  [ -z "$jvm" ] || kill "$jvm" 2>/dev/null || true
  wait 2>/dev/null || true
}
stop_with_this_script() {  # on exit, kill (143) and Ctrl-C (130): the JVM goes with the script
  trap stop EXIT
  trap 'stop; exit 143' TERM
  trap 'stop; exit 130' INT
}
