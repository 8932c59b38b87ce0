#!/usr/bin/env bash
# Fetch Beam's Flink job server with Maven (never an HTTP download at run time) and print the path of its
# launcher jar, for `--flink_job_server_jar` (docs/scale-out.md#flink). Usage: tools/flink-job-server.sh [DIR]
# (default: $INCOHERENT_FLINK_HOME, else ~/.cache/incoherent/flink-job-server-$BEAM-flink-$FLINK).
#
# Maven Central, as this project's machines reach it, serves no shaded `beam-runners-flink-*-job-server` jar at
# any version (docs/scale-out.md#flink lists the commands tried); Beam 2.62.0 is the newest version whose Flink
# runner library (`beam-runners-flink-1.19`) and job service (`beam-runners-java-job-service`) are both served,
# so this script assembles the job server from them: their jars and dependencies in DIR/lib, and DIR/$JAR, a
# jar holding only a manifest (Main-Class FlinkJobServerDriver, Class-Path lib/*), which Beam's FlinkRunner runs
# with `java -jar` like the shaded one. The same jars are a Flink 1.19.0 JobManager's and TaskManager's
# classpath (tools/flink-cluster.sh). It is run again at no cost: a complete DIR is kept.
set -euo pipefail
BEAM=2.62.0
FLINK=1.19
FLINK_PATCH=1.19.0  # the Flink version beam-runners-flink-1.19:2.62.0 depends on (its jars in lib/)
SLF4J=1.7.30        # slf4j-api's version in lib/: slf4j-simple gives the JVMs a log
JAR="beam-runners-flink-$FLINK-job-server-$BEAM.jar"
dir="${1:-${INCOHERENT_FLINK_HOME:-$HOME/.cache/incoherent/flink-job-server-$BEAM-flink-$FLINK}}"
if [ -f "$dir/$JAR" ] && [ -f "$dir/COMPLETE" ]; then
  echo "$dir/$JAR"
  exit 0
fi
# DIR's lib/ is emptied and its pom.xml written: only in a folder this script made (its mark, MARK, written
# first) or an empty or new one, never in a folder of someone else's (a Flink or Spark install's lib/)
MARK=".incoherent-flink-job-server"
if [ -e "$dir" ] && [ ! -f "$dir/$MARK" ] && [ -n "$(ls -A "$dir" 2>/dev/null || echo unreadable)" ]; then
  echo "error: $dir: not empty and not made by $(basename "$0") (no $MARK there); give a new or empty folder" >&2
  exit 2
fi
mkdir -p "$dir"
echo "made by incoherent's tools/$(basename "$0"): its lib/ and pom.xml are replaced when it runs again" >"$dir/$MARK"
mkdir -p "$dir"
pom="$dir/pom.xml"
cat >"$pom" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>incoherent</groupId><artifactId>flink-job-server</artifactId><version>$BEAM</version>
  <dependencies>
    <dependency><groupId>org.apache.beam</groupId><artifactId>beam-runners-flink-$FLINK</artifactId><version>$BEAM</version></dependency>
    <dependency><groupId>org.apache.beam</groupId><artifactId>beam-runners-java-job-service</artifactId><version>$BEAM</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-simple</artifactId><version>$SLF4J</version></dependency>
  </dependencies>
</project>
POM
rm -rf "$dir/lib"
mvn -B -q -f "$pom" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$dir/lib" >&2
for needed in "beam-runners-flink-$FLINK-$BEAM.jar" "beam-runners-java-job-service-$BEAM.jar" \
  "flink-runtime-$FLINK_PATCH.jar" "flink-clients-$FLINK_PATCH.jar" "slf4j-simple-$SLF4J.jar"; do
  if [ ! -f "$dir/lib/$needed" ]; then
    echo "error: $needed: not fetched by Maven into $dir/lib" >&2
    exit 1
  fi
done
python3 "$(dirname "$0")/launcher-jar.py" "$dir" "$JAR" lib org.apache.beam.runners.flink.FlinkJobServerDriver
echo "beam $BEAM flink $FLINK_PATCH" >"$dir/COMPLETE"
echo "$dir/$JAR"
