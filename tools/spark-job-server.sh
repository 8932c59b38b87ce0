#!/usr/bin/env bash
# Fetch Beam's Spark job server with Maven (never an HTTP download at run time) and print the path of its
# launcher jar, for `--spark_job_server_jar` (docs/scale-out.md#spark). Usage: tools/spark-job-server.sh [DIR]
# (default: $INCOHERENT_SPARK_HOME, else ~/.cache/incoherent/spark-job-server-$BEAM-spark-$SPARK).
#
# Maven Central, as this project's machines reach it, serves no shaded `beam-runners-spark-3-job-server` jar at
# any version (docs/scale-out.md#spark lists the commands tried), but Beam 2.62.0's Spark runner library
# (`beam-runners-spark-3`) and job service (`beam-runners-java-job-service`) are served: this script assembles
# the job server from them, as tools/flink-job-server.sh does for Flink. The runner's pom names Spark 3.2.2
# (scope provided, Scala 2.12), so Spark's own jars are asked for at that version; jackson-module-scala is
# moved to Beam's Jackson (2.15.4), which Spark's 2.12.3 refuses to run beside. DIR is laid out as a Spark
# home, so the same jars are the standalone master's and worker's (tools/spark-cluster.sh): DIR/jars (every
# jar), DIR/RELEASE (a Spark home's mark: the worker then launches executors on DIR/jars/*), DIR/conf/java-opts
# (the --add-opens flags Spark 3.2 needs on Java 17, read by the worker for each executor it launches) and
# DIR/$JAR, a jar holding only a manifest (Main-Class SparkJobServerDriver, Class-Path jars/*), which Beam's
# SparkRunner runs with `java -jar` like the shaded one. It is run again at no cost: a complete DIR is kept.
set -euo pipefail
BEAM=2.62.0
SPARK=3.2.2     # the Spark version beam-runners-spark-3:2.62.0's pom names (scope provided)
JACKSON=2.15.4  # jackson-databind's version in Beam 2.62.0: jackson-module-scala must match it
JAR="beam-runners-spark-3-job-server-$BEAM.jar"
dir="${1:-${INCOHERENT_SPARK_HOME:-$HOME/.cache/incoherent/spark-job-server-$BEAM-spark-$SPARK}}"
if [ -f "$dir/$JAR" ] && [ -f "$dir/COMPLETE" ]; then
  echo "$dir/$JAR"
  exit 0
fi
# DIR's jars/ is emptied and its pom.xml written: only in a folder this script made (its mark, MARK, written
# first) or an empty or new one, never in a folder of someone else's (a Flink or Spark install's jars/)
MARK=".incoherent-spark-job-server"
if [ -e "$dir" ] && [ ! -f "$dir/$MARK" ] && [ -n "$(ls -A "$dir" 2>/dev/null || echo unreadable)" ]; then
  echo "error: $dir: not empty and not made by $(basename "$0") (no $MARK there); give a new or empty folder" >&2
  exit 2
fi
mkdir -p "$dir"
echo "made by incoherent's tools/$(basename "$0"): its jars/ and pom.xml are replaced when it runs again" >"$dir/$MARK"
mkdir -p "$dir/conf"
pom="$dir/pom.xml"
cat >"$pom" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>incoherent</groupId><artifactId>spark-job-server</artifactId><version>$BEAM</version>
  <dependencies>
    <dependency><groupId>org.apache.beam</groupId><artifactId>beam-runners-spark-3</artifactId><version>$BEAM</version></dependency>
    <dependency><groupId>org.apache.beam</groupId><artifactId>beam-runners-java-job-service</artifactId><version>$BEAM</version></dependency>
    <dependency><groupId>org.apache.spark</groupId><artifactId>spark-core_2.12</artifactId><version>$SPARK</version></dependency>
    <dependency><groupId>org.apache.spark</groupId><artifactId>spark-streaming_2.12</artifactId><version>$SPARK</version></dependency>
    <dependency><groupId>com.fasterxml.jackson.module</groupId><artifactId>jackson-module-scala_2.12</artifactId><version>$JACKSON</version></dependency>
  </dependencies>
</project>
POM
rm -rf "$dir/jars"
mvn -B -q -f "$pom" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$dir/jars" >&2
for needed in "beam-runners-spark-3-$BEAM.jar" "beam-runners-java-job-service-$BEAM.jar" \
  "spark-core_2.12-$SPARK.jar" "spark-streaming_2.12-$SPARK.jar" "jackson-module-scala_2.12-$JACKSON.jar"; do
  if [ ! -f "$dir/jars/$needed" ]; then
    echo "error: $needed: not fetched by Maven into $dir/jars" >&2
    exit 1
  fi
done
# the module flags Spark 3.3 and later add by themselves (Spark 3.2 predates Java 17 support)
opens=""
for package in java.lang java.lang.invoke java.lang.reflect java.io java.net java.nio java.util java.util.concurrent \
  java.util.concurrent.atomic sun.nio.ch sun.nio.cs sun.security.action sun.util.calendar; do
  opens+="--add-opens=java.base/$package=ALL-UNNAMED "
done
echo "${opens% }" >"$dir/conf/java-opts"
echo "Spark $SPARK (Scala 2.12) for Beam $BEAM, fetched with Maven by incoherent's tools/spark-job-server.sh" >"$dir/RELEASE"
python3 "$(dirname "$0")/launcher-jar.py" "$dir" "$JAR" jars org.apache.beam.runners.spark.SparkJobServerDriver
echo "beam $BEAM spark $SPARK" >"$dir/COMPLETE"
echo "$dir/$JAR"
