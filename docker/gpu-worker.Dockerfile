# CUDA worker image for the adversarial filter stage on Dataflow GPU workers (see docs/scale-out.md).
# Beam's Python 3.11 SDK image, the same Beam version as the pipeline, plus incoherent installed from its wheel
# with the `dataflow` and `models` extras; torch's Linux wheels bring their own CUDA runtime, and Dataflow
# installs the NVIDIA driver
# (`--dataflow_service_options=worker_accelerator=type:nvidia-l4;count:1;install-nvidia-driver`).
#
#   docker build -f docker/gpu-worker.Dockerfile -t REGION-docker.pkg.dev/PROJECT/REPO/incoherent-gpu:0.1.0 .
#   docker push REGION-docker.pkg.dev/PROJECT/REPO/incoherent-gpu:0.1.0
#
# The first stage builds the wheel from the repository (the build context, less what .dockerignore leaves out),
# so the image holds exactly what `pip install incoherent` installs: every package and the bundled samples.

FROM apache/beam_python3.11_sdk:2.77.0 AS wheel
WORKDIR /src
COPY . .
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /dist .

FROM apache/beam_python3.11_sdk:2.77.0
COPY --from=wheel /dist /dist
RUN set -e; wheel="$(ls /dist/incoherent-*.whl)"; \
    pip install --no-cache-dir "${wheel}[dataflow,models]"; \
    python -c "import torch, transformers, apache_beam, incoherent.pipelines.cli; print(torch.__version__, apache_beam.__version__)"

# Beam's SDK harness stays the entry point.
ENTRYPOINT ["/opt/apache/beam/boot"]
