"""Which Flink job a ``FlinkRunner`` pipeline became, said on the terminal: its id and where to watch it.

Beam's Flink job server names the Flink job after the Beam job (``BeamApp-<user>-<MMddHHmmss>-<hex>``) and gives
the Python side a job id of that name plus ``_<uuid>``. While the pipeline runs, :func:`announce_flink_job` asks
the cluster's REST API (the ``--flink_master`` address) for the job of that name, every 2 s with a 5 s bound per
request, and prints one line on stderr (not with ``--quiet``) as soon as it is there::

    [flink] job 684f837fe77016061b2cde563c389351: http://127.0.0.1:8081/jobs/684f837fe77016061b2cde563c389351

the job's REST address (state, vertices, exceptions). Where the cluster serves Flink's web UI (Flink's own
distribution) the line gives the job's page there first; the cluster ``tools/flink-cluster.sh`` starts from
the job server's jars has no ``flink-runtime-web`` (its ``/`` answers 404), so the line gives no such link.
Each request is bounded in total time (a server that drips its answer is given up). With ``--job_endpoint``
(``build`` gives its stages the one job server it starts), the job is looked for at ``--flink_master``, to which Beam's Flink job server submits it. Nothing is
printed for another runner or Beam's ``[local]``/``[auto]`` masters (none given: no master known here).
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable

from incoherent.nofollow import open_url
from incoherent.terminal import printable

POLL_SECONDS = 2.0
REQUEST_SECONDS = 5.0


def flink_rest_address(options) -> str | None:
    """``http://HOST:PORT`` of the Flink master a ``FlinkRunner`` pipeline is submitted to, else None.

    >>> from apache_beam.options.pipeline_options import PipelineOptions
    >>> flink_rest_address(PipelineOptions(["--runner=FlinkRunner", "--flink_master=127.0.0.1:8081"]))
    'http://127.0.0.1:8081'
    >>> flink_rest_address(PipelineOptions(["--runner=FlinkRunner", "--flink_master=[local]"])) is None
    True
    """
    from apache_beam.options.pipeline_options import FlinkRunnerOptions, StandardOptions

    from incoherent.pipelines.runtime.job_servers import _master_address
    from incoherent.pipelines.runtime.options import runner_key

    if runner_key(options.view_as(StandardOptions).runner) not in ("flinkrunner", "flink"):
        return None
    address = _master_address(options.view_as(FlinkRunnerOptions).flink_master or "")
    return None if address is None else f"http://{address[0]}:{address[1]}"


def job_line(rest: str, job_id: str, web_ui: bool = False) -> str:
    """The line the user sees: the job's REST address, and its page of Flink's web UI where the cluster serves
    one (a link that answers 404 is not given).

    >>> job_line("http://127.0.0.1:8081", "ab12")
    '[flink] job ab12: http://127.0.0.1:8081/jobs/ab12'
    >>> job_line("http://127.0.0.1:8081", "ab12", web_ui=True)
    '[flink] job ab12: http://127.0.0.1:8081/#/job/ab12/overview (REST: http://127.0.0.1:8081/jobs/ab12)'
    """
    if web_ui:
        return f"[flink] job {job_id}: {rest}/#/job/{job_id}/overview (REST: {rest}/jobs/{job_id})"
    return f"[flink] job {job_id}: {rest}/jobs/{job_id}"


def serves_web_ui(rest: str) -> bool:
    """Whether the cluster at ``rest`` serves Flink's web UI (its ``/`` an HTML page, not 404)."""
    from incoherent.deadline import DeadlinePassed, within

    def ask() -> bool:
        with open_url(f"{rest}/", REQUEST_SECONDS) as response:
            return "html" in response.headers.get("Content-Type", "")

    try:
        return within(REQUEST_SECONDS, ask)
    except (OSError, ValueError, DeadlinePassed):
        return False


def find_job(rest: str, beam_job_id: str) -> str | None:
    """The id of the Flink job that Beam's job ``beam_job_id`` became, if the cluster lists it yet."""
    from incoherent.deadline import DeadlinePassed, within

    def ask() -> list:
        with open_url(f"{rest}/jobs/overview", REQUEST_SECONDS) as response:
            return json.loads(response.read(1 << 24)).get("jobs", [])

    try:
        jobs = within(REQUEST_SECONDS, ask)
    except DeadlinePassed:
        return None
    for job in jobs:
        name = str(job.get("name", ""))
        if name and (beam_job_id == name or beam_job_id.startswith(name + "_")):
            return str(job.get("jid"))
    return None


def announce_flink_job(result, options, quiet: bool) -> Callable[[], None]:
    """Print :func:`job_line` once the Flink job of ``result`` (a running portable pipeline) is listed; returns
    the function that stops looking (call it when the pipeline has ended). A no-op for other runners."""
    rest = flink_rest_address(options)
    beam_job_id = getattr(result, "_job_id", None)
    if quiet or rest is None or not isinstance(beam_job_id, str):
        return lambda: None
    done = threading.Event()

    def look() -> None:
        while not done.is_set():
            try:
                found = find_job(rest, beam_job_id)
            except (
                OSError,
                ValueError,
            ):  # the REST API busy or not there: asked again, until the pipeline ends
                found = None
            if found:  # the id and the address came from a server: printed with control characters escaped
                line = job_line(rest, found, serves_web_ui(rest))
                print(printable(line), file=sys.stderr, flush=True)
                return
            done.wait(POLL_SECONDS)

    thread = threading.Thread(target=look, name="flink-job-id", daemon=True)
    thread.start()

    def stop() -> None:
        done.set()
        thread.join(REQUEST_SECONDS + 1)

    return stop
