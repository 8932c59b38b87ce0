"""``incoherent-sdk-worker``: Beam's SDK worker boot contract in Python, for an ``EXTERNAL`` worker pool.

Beam's ``worker_pool_main`` starts each SDK worker as ``python -c 'SdkHarness(...).run()'``, which never gets the
pipeline's options: Beam's filesystems on that worker have none (``FileSystems.set_options`` is called only by
``sdk_worker_main``), and ``s3://`` fails there with ``ValueError: Must provide one of client or options`` (the
endpoint and keys are pipeline options). Given ``--container_executable`` (this command), the pool runs it with
the worker's endpoints instead, as Beam's container boot executable is run; this asks the runner's provision
service for the pipeline's options and starts ``sdk_worker_main`` with them, which sets them for Beam's
filesystems. docs/scale-out.md#a-cluster::

    python -m apache_beam.runners.worker.worker_pool_main --service_port=50000 \\
      --container_executable="$(command -v incoherent-sdk-worker)"
"""

from __future__ import annotations

import argparse
import os
import sys

PROVISION_SECONDS = 60


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="incoherent-sdk-worker")
    for name in ("id", "logging_endpoint", "artifact_endpoint", "provision_endpoint", "control_endpoint"):
        parser.add_argument(f"--{name}", required=name != "artifact_endpoint")
    args = parser.parse_args(argv)

    import grpc
    from apache_beam.portability.api import beam_provision_api_pb2, beam_provision_api_pb2_grpc, endpoints_pb2
    from google.protobuf import json_format, text_format

    with grpc.insecure_channel(args.provision_endpoint) as channel:
        stub = beam_provision_api_pb2_grpc.ProvisionServiceStub(channel)
        info = stub.GetProvisionInfo(
            beam_provision_api_pb2.GetProvisionInfoRequest(), metadata=[("worker_id", args.id)],
            timeout=PROVISION_SECONDS,
        ).info  # fmt: skip

    def descriptor(url: str) -> str:
        return text_format.MessageToString(endpoints_pb2.ApiServiceDescriptor(url=url))

    env = dict(os.environ)
    env.update(
        WORKER_ID=args.id,
        PIPELINE_OPTIONS=json_format.MessageToJson(info.pipeline_options),
        LOGGING_API_SERVICE_DESCRIPTOR=descriptor(args.logging_endpoint),
        CONTROL_API_SERVICE_DESCRIPTOR=descriptor(args.control_endpoint),
        RUNNER_CAPABILITIES=" ".join(info.runner_capabilities),
    )
    os.execve(sys.executable, [sys.executable, "-m", "apache_beam.runners.worker.sdk_worker_main"], env)


if __name__ == "__main__":
    main()
