""":func:`pipelines.runtime.run.query_counters` on Beam's portable metrics, as Flink's job server returns them."""

from __future__ import annotations

from apache_beam.metrics import monitoring_infos
from apache_beam.portability.api import beam_job_api_pb2
from apache_beam.runners.portability.portable_runner import PortableMetrics

from incoherent.pipelines.runtime.run import query_counters


class Result:
    def __init__(self, infos):
        response = beam_job_api_pb2.GetJobMetricsResponse()
        response.metrics.committed.extend(infos)
        response.metrics.attempted.extend(infos)
        self._metrics = PortableMetrics(response)

    def metrics(self):
        return self._metrics


def test_the_runners_system_metrics_are_not_the_pipelines_counters():
    # Flink's job server returns Beam's system metrics beside the pipeline's counters; the portable runner
    # names them namespace "beam", name "metric:element_count:v1" (the rest of their URN)
    infos = [
        monitoring_infos.int64_user_counter("shuffle", "kept", 83, ptransform="Shuffle/Apply"),
        monitoring_infos.int64_user_counter("shuffle", "kept", 17, ptransform="Shuffle/Other"),
        monitoring_infos.int64_counter(monitoring_infos.ELEMENT_COUNT_URN, 9, pcollection="pc1"),
        monitoring_infos.int64_counter(monitoring_infos.START_BUNDLE_MSECS_URN, 11939, ptransform="Read"),
    ]
    namespaces = {counter.key.metric.namespace for counter in Result(infos).metrics().query()["counters"]}
    assert namespaces == {"shuffle", "beam"}
    assert query_counters(Result(infos)) == {"shuffle": {"kept": 100}}
