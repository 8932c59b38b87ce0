"""Write a launcher jar: a jar holding only a manifest whose Main-Class is MAIN_CLASS and whose Class-Path
lists every jar of FOLDER/LIBS, for `java -jar` (what Beam's FlinkRunner and SparkRunner run). Written as
FOLDER/NAME through a partial file, with a fixed date, so the same jars give the same bytes.
Usage: python3 tools/launcher-jar.py FOLDER NAME LIBS MAIN_CLASS (tools/flink-job-server.sh, spark-job-server.sh)
"""

import os
import sys
import zipfile


def wrap(header: str) -> bytes:
    """One manifest header: lines of at most 72 bytes; a continuation line starts with one space."""
    raw, lines = header.encode(), []
    lines.append(raw[:72])
    raw = raw[72:]
    while raw:
        lines.append(b" " + raw[:71])
        raw = raw[71:]
    return b"\r\n".join(lines) + b"\r\n"


def main(folder: str, name: str, libs: str, main_class: str) -> None:
    jars = sorted(f for f in os.listdir(os.path.join(folder, libs)) if f.endswith(".jar"))
    paths = " ".join(f"{libs}/{f}" for f in jars)
    manifest = (
        wrap("Manifest-Version: 1.0")
        + wrap(f"Main-Class: {main_class}")
        + wrap(f"Class-Path: {paths}")
        + b"\r\n"
    )
    tmp = os.path.join(folder, name + ".partial")
    with zipfile.ZipFile(tmp, "w") as jar:
        jar.writestr(zipfile.ZipInfo("META-INF/MANIFEST.MF", date_time=(1980, 1, 1, 0, 0, 0)), manifest)
    os.replace(tmp, os.path.join(folder, name))


if __name__ == "__main__":
    main(*sys.argv[1:])
