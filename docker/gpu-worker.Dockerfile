# CUDA worker image for the adversarial filter stage on Dataflow GPU workers (see README "Running at scale").
# Beam's Python 3.11 SDK image, the same Beam version as the pipeline, plus incoherent and its pinned
# dependencies; torch's Linux wheels bring their own CUDA runtime, and Dataflow installs the NVIDIA driver
# (`--dataflow_service_options=worker_accelerator=type:nvidia-l4;count:1;install-nvidia-driver`).
#
#   docker build -f docker/gpu-worker.Dockerfile -t REGION-docker.pkg.dev/PROJECT/REPO/incoherent-gpu:0.1.0 .
#   docker push REGION-docker.pkg.dev/PROJECT/REPO/incoherent-gpu:0.1.0
FROM apache/beam_python3.11_sdk:2.77.0

WORKDIR /opt/incoherent
COPY pyproject.toml README.md ./
COPY pipelines pipelines
COPY retrieval retrieval
COPY filters filters
COPY schemas schemas
COPY sources sources
COPY corpora corpora
RUN pip install --no-cache-dir ".[dataflow]" \
    && python -c "import torch, transformers, apache_beam; print(torch.__version__, apache_beam.__version__)"

# Beam's SDK harness stays the entry point.
ENTRYPOINT ["/opt/apache/beam/boot"]
