"""What a model directory may hold before anything of it is loaded: no code, safetensors weights only.

Checks that read files only (no transformers model, no torch), so a hostile directory is refused with one
line before ``from_pretrained`` sees it:

* ``config.json`` (at most :data:`MAX_CONFIG_BYTES`) must name a ``model_type`` transformers ships, and no
  JSON config of the directory may carry ``auto_map`` or ``custom_pipelines`` (what makes transformers run
  Python files that came with the model);
* weights are safetensors: ``*.safetensors`` or a ``model.safetensors.index.json`` whose shards lie in the
  directory; pickled weights (``pytorch_model.bin`` ...) are never loaded, a directory holding only those is
  refused;
* every safetensors file is a regular file whose header is well formed: an 8-byte length of at most
  :data:`MAX_HEADER_BYTES` (the safetensors library's own limit), a JSON header, and tensors that end inside
  the file (a truncated download is refused, not half loaded).

Every ``from_pretrained`` in this project passes ``trust_remote_code=False`` as well.
"""

from __future__ import annotations

import json
import os

from schemas.records import InputError

MAX_CONFIG_BYTES = 16 << 20
MAX_HEADER_BYTES = 100_000_000  # the safetensors format's own cap on a header
WEIGHT_INDEX = "model.safetensors.index.json"
PICKLE_FILES = ("pytorch_model.bin", "pytorch_model.bin.index.json", "tf_model.h5", "flax_model.msgpack")
# JSON files transformers reads from a model directory; any of them can point at code with ``auto_map``.
CODE_KEYS = ("auto_map", "custom_pipelines")
JSON_CONFIGS = (
    "config.json",
    "tokenizer_config.json",
    "preprocessor_config.json",
    "processor_config.json",
    "feature_extractor_config.json",
    "image_processor_config.json",
    "generation_config.json",
)


def read_json(path: str, limit: int = MAX_CONFIG_BYTES) -> dict:
    """A small JSON object from a regular file, or one :class:`InputError` line."""
    if not os.path.isfile(path):
        raise InputError(f"{path}: not a regular file")
    if os.path.getsize(path) > limit:
        raise InputError(f"{path}: larger than {limit >> 20} MiB, not a model config")
    try:
        with open(path, "rb") as f:
            value = json.loads(f.read(limit + 1).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise InputError(f"{path}: not valid JSON ({str(exc).splitlines()[0][:200]})") from None
    if not isinstance(value, dict):
        raise InputError(f"{path}: expected a JSON object")
    return value


def known_model_types() -> set[str]:
    """The ``model_type`` values transformers implements itself."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    return set(CONFIG_MAPPING_NAMES)


def check_no_code(model_dir: str, config: dict | None = None) -> None:
    """Refuse a directory whose configs ask for code of their own: ``auto_map`` / ``custom_pipelines`` in any
    JSON config, or a ``model_type`` transformers does not implement. ``config``: ``config.json`` if read."""
    config = read_json(os.path.join(model_dir, "config.json")) if config is None else config
    for name in JSON_CONFIGS:
        path = os.path.join(model_dir, name)
        data = config if name == "config.json" else (read_json(path) if os.path.lexists(path) else {})
        for key in CODE_KEYS:
            if key in data:
                raise InputError(
                    f"{path}: `{key}` asks to run code shipped with the model; refusing (only models that "
                    "transformers implements itself are loaded)"
                )
    model_type = config.get("model_type")
    if not isinstance(model_type, str) or not model_type:
        raise InputError(f"{os.path.join(model_dir, 'config.json')}: no `model_type`; refusing the model")
    if model_type not in known_model_types():
        raise InputError(
            f"{os.path.join(model_dir, 'config.json')}: model_type {model_type[:80]!r} is not one "
            "transformers implements (custom code is never run); refusing the model"
        )


def check_safetensors(path: str) -> None:
    """A regular file with a well-formed safetensors header whose tensors end inside the file.

    Layout: 8 bytes little-endian header length ``n``, ``n`` bytes of JSON ``{name: {dtype, shape,
    data_offsets: [begin, end]}, "__metadata__": {...}}``, then the tensor bytes (offsets relative to them).
    """
    if not os.path.isfile(path):
        raise InputError(f"{path}: not a regular file")
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise InputError(f"{path}: truncated safetensors file ({size} bytes)")
        n = int.from_bytes(head, "little")
        if n > MAX_HEADER_BYTES:
            raise InputError(
                f"{path}: safetensors header of {n:,} bytes (the format allows {MAX_HEADER_BYTES:,}); "
                "not a model file"
            )
        if 8 + n > size:
            raise InputError(
                f"{path}: truncated safetensors file (header of {n:,} bytes, file of {size:,} bytes)"
            )
        try:
            header = json.loads(f.read(n).decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise InputError(f"{path}: corrupt safetensors header (not JSON)") from None
    if not isinstance(header, dict):
        raise InputError(f"{path}: corrupt safetensors header (not a JSON object)")
    end = 0
    for name, info in header.items():
        if name == "__metadata__":
            continue
        offsets = info.get("data_offsets") if isinstance(info, dict) else None
        if (
            not isinstance(offsets, list)
            or len(offsets) != 2
            or not all(isinstance(o, int) and o >= 0 for o in offsets)
        ):
            raise InputError(f"{path}: corrupt safetensors header (tensor {str(name)[:80]!r})")
        end = max(end, offsets[1])
    if 8 + n + end > size:
        raise InputError(
            f"{path}: truncated safetensors file ({size:,} bytes, its tensors need {8 + n + end:,})"
        )


def weight_files(model_dir: str) -> list[str]:
    """The safetensors files of a directory (the shards of its index, or ``*.safetensors``), checked to lie in
    it; a directory with only pickled weights, or none, is refused."""
    names = set(os.listdir(model_dir))
    if WEIGHT_INDEX in names:
        index = read_json(os.path.join(model_dir, WEIGHT_INDEX))
        shards = index.get("weight_map")
        if not isinstance(shards, dict) or not shards:
            raise InputError(f"{os.path.join(model_dir, WEIGHT_INDEX)}: no weight_map")
        files = sorted({str(s) for s in shards.values()})
        for shard in files:
            if os.path.basename(shard) != shard or shard in (".", "..") or not shard.endswith(".safetensors"):
                raise InputError(
                    f"{os.path.join(model_dir, WEIGHT_INDEX)}: shard {shard[:80]!r} is not a .safetensors "
                    "file of the model directory"
                )
        return [os.path.join(model_dir, s) for s in files]
    files = sorted(n for n in names if n.endswith(".safetensors"))
    if files:
        return [os.path.join(model_dir, n) for n in files]
    pickled = sorted(names & set(PICKLE_FILES))
    if pickled:
        raise InputError(
            f"{model_dir}: only pickled weights ({', '.join(pickled)}); refusing to load them, convert the "
            "checkpoint to safetensors (model.save_pretrained(dir, safe_serialization=True))"
        )
    raise InputError(f"{model_dir}: no model.safetensors weights")


def check_model_files(model_dir: str) -> None:
    """Everything above, for a local model directory, before transformers reads any of it."""
    if not os.path.isdir(model_dir):
        raise InputError(f"{model_dir}: model directory does not exist")
    if not os.path.exists(os.path.join(model_dir, "config.json")):
        raise InputError(f"{model_dir}: no config.json, not a Hugging Face model directory")
    check_no_code(model_dir)
    for path in weight_files(model_dir):
        check_safetensors(path)
