# CPU worker image: SDK workers for `--environment_type=DOCKER --environment_config=IMAGE` on a Flink or Spark
# cluster (each TaskManager host starts its containers) or on Dataflow (`--sdk_container_image IMAGE`), for every
# stage but a model filter on GPUs (docker/gpu-worker.Dockerfile). Beam's Python 3.11 SDK image, the same Beam
# version as the pipeline, plus incoherent installed from its wheel with the `aws` and `dataflow` extras (S3 and
# GCS paths); no model stack (`incoherent[models]`: add it for `intruders --filter` or `score-shuffle`).
#
#   docker build -f docker/cpu-worker.Dockerfile -t incoherent-cpu:0.1.0 .
#   docker run --rm --entrypoint python incoherent-cpu:0.1.0 -c "import incoherent"   # what incoherent checks
#
# Not built here (no Docker on the machine where it was written); `incoherent` refuses a DOCKER environment whose
# image does not import incoherent, in one line, before anything runs (docs/scale-out.md#sdk-workers).

FROM apache/beam_python3.11_sdk:2.77.0 AS wheel
WORKDIR /src
COPY . .
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /dist .

FROM apache/beam_python3.11_sdk:2.77.0
COPY --from=wheel /dist /dist
RUN set -e; wheel="$(ls /dist/incoherent-*.whl)"; \
    pip install --no-cache-dir "${wheel}[aws,dataflow]"; \
    python -c "import apache_beam, incoherent.pipelines.cli; print(apache_beam.__version__)"

# Beam's SDK harness stays the entry point.
ENTRYPOINT ["/opt/apache/beam/boot"]
