#!/usr/bin/env bash
# Fetch s3proxy (an S3-compatible server; its filesystem backend keeps each bucket as a folder) with Maven, never
# an HTTP download at run time, and print the path of its jar-with-dependencies, which runs on Java 17:
#   java -jar JAR --properties s3proxy.conf
# tests/e2e/test_hosts.py runs it as the object store of a cluster of network namespaces (docs/scale-out.md).
# Usage: tools/s3proxy.sh [DIR] (default: $INCOHERENT_S3PROXY_HOME, else ~/.cache/incoherent/s3proxy-$VERSION).
# It is run again at no cost: a complete DIR is kept.
set -euo pipefail
VERSION=2.6.0
JAR="s3proxy-$VERSION-jar-with-dependencies.jar"
dir="${1:-${INCOHERENT_S3PROXY_HOME:-$HOME/.cache/incoherent/s3proxy-$VERSION}}"
if [ -f "$dir/$JAR" ] && [ -f "$dir/COMPLETE" ]; then
  echo "$dir/$JAR"
  exit 0
fi
mkdir -p "$dir"
mvn -B -q dependency:copy -Dartifact="org.gaul:s3proxy:$VERSION:jar:jar-with-dependencies" \
  -DoutputDirectory="$dir" >&2
if [ ! -f "$dir/$JAR" ]; then
  echo "error: $JAR: not fetched by Maven into $dir" >&2
  exit 1
fi
echo "s3proxy $VERSION" >"$dir/COMPLETE"
echo "$dir/$JAR"
