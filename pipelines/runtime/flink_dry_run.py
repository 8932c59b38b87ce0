"""What ``--dry-run`` checks of a ``--runner FlinkRunner`` run, beyond the job graph every dry run builds.

Beam's portable job service translates a job for Flink only when it runs it: its ``Prepare`` call stores the
pipeline and options without looking at them, and ``Run`` validates the pipeline, translates it into a Flink
program (``FlinkPipelineRunner.run``: fusion, then ``FlinkBatchPortablePipelineTranslator.translate``) and
executes that program in the same call, with no step in between to stop at (Beam's ``InMemoryJobService``,
``FlinkPipelineRunner``). So a dry run cannot have Flink's own translation without submitting the job. What it
does check, in seconds and starting nothing: the job server jar is a local file (Beam would otherwise download
one at run time), the master answers Flink's REST API, and the cluster's Flink version is the one the job
server is built for (``beam-runners-flink-<major.minor>-job-server`` in the jar's name); the line it returns
says so. With ``--job_endpoint`` (a job server already running) nothing of this is checked.
"""

from __future__ import annotations

import re

from incoherent.schemas.records import InputError

NOT_TRANSLATED = "Flink's own translation not run: Beam's job service translates a job only when it runs it"


def flink_version_of_jar(jar: str) -> str | None:
    """The Flink ``major.minor`` a Beam Flink job server jar is built for, from its Maven name.

    >>> flink_version_of_jar("/x/beam-runners-flink-1.19-job-server-2.62.0.jar")
    '1.19'
    >>> flink_version_of_jar("/x/server.jar") is None
    True
    """
    found = re.search(r"beam-runners-flink-(\d+\.\d+)-job-server", jar.rsplit("/", 1)[-1])
    return found.group(1) if found else None


def check_flink(options) -> str | None:
    """For a ``FlinkRunner`` dry run, check what can be checked without running (module docstring) and return
    one line saying what was checked and what was not; None for any other runner. Raise :class:`InputError`
    for a missing jar, a master that does not answer, or a cluster of another Flink version."""
    from apache_beam.options.pipeline_options import FlinkRunnerOptions, PortableOptions, StandardOptions

    from incoherent.pipelines.runtime.job_servers import _jar_problem, _master_address, cluster_overview

    runner = options.view_as(StandardOptions).runner
    if not isinstance(runner, str) or runner.rsplit(".", 1)[-1].lower() not in ("flinkrunner", "flink"):
        return None
    if options.view_as(PortableOptions).job_endpoint:
        return f"job server at --job_endpoint not contacted; {NOT_TRANSLATED}"
    flink = options.view_as(FlinkRunnerOptions)
    problem = _jar_problem("flink_job_server_jar", flink.flink_job_server_jar, "FlinkRunner")
    if problem:
        raise InputError(problem)
    address = _master_address(flink.flink_master)
    if address is None:  # [local], [auto]: the job server's own embedded cluster, nothing to ask
        return f"job server jar found; master {flink.flink_master}: an embedded cluster; {NOT_TRANSLATED}"
    overview = cluster_overview(*address)
    version, built_for = str(overview["flink-version"]), flink_version_of_jar(flink.flink_job_server_jar)
    if built_for and not (version == built_for or version.startswith(built_for + ".")):
        raise InputError(
            f"--flink_master {flink.flink_master}: a Flink {version} cluster, but the job server "
            f"{flink.flink_job_server_jar} is built for Flink {built_for}"
        )
    return (
        f"job server jar found; master {address[0]}:{address[1]}: Flink {version}, "
        f"{overview.get('taskmanagers', '?')} TaskManager(s), {overview.get('slots-total', '?')} slots; "
        f"{NOT_TRANSLATED}"
    )
