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
  :data:`MAX_HEADER_BYTES` (the safetensors library's own limit), a JSON header, tensors that end inside
  the file (a truncated download is refused, not half loaded) and whose shapes match their bytes;
* the config fits the weights (:func:`check_config_fits_weights`): transformers allocates the whole model
  from ``config.json`` before it reads a weight, so a few edited bytes (``n_layer: 2000`` beside 42 KB of
  weights, ``n_positions: 30000000``) would cost gigabytes before any check. The model is built on PyTorch's
  ``meta`` device (shapes, no memory) with one and with two layers per stack, every tensor of that small model
  found in the weights must have the weights' shape, and the parameters the config describes (the one-layer
  model plus the per-layer count times the layers) may not exceed those the weights hold by more than
  :data:`SLACK_PARAMETERS` (a pooler or a fresh head);
* tokenizer files are at most :data:`MAX_TOKENIZER_BYTES` each (:func:`check_tokenizer_files`).

Every ``from_pretrained`` in this project passes ``trust_remote_code=False`` as well.
"""

from __future__ import annotations

import json
import math
import os

from incoherent.schemas.records import InputError

MAX_CONFIG_BYTES = 16 << 20
MAX_TOKENIZER_BYTES = 64 << 20  # the largest real tokenizer.json files (256k-token vocabularies) are ~35 MB
SLACK_PARAMETERS = 1 << 22  # parameters a config may describe beyond its weights (a pooler, a new head)
# bytes per element of the safetensors dtypes
DTYPE_BYTES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1, "I16": 2, "U16": 2, "F16": 2}
DTYPE_BYTES |= {"BF16": 2, "I32": 4, "U32": 4, "F32": 4, "I64": 8, "U64": 8, "F64": 8}
TOKENIZER_FILE_NAMES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.json",
    "vocab.txt",
    "merges.txt",
    "spiece.model",
    "sentencepiece.bpe.model",
    "tokenizer.model",
    "added_tokens.json",
    "special_tokens_map.json",
)
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


def check_safetensors(path: str) -> dict[str, tuple[int, ...]]:
    """A regular file with a well-formed safetensors header whose tensors end inside the file and whose shapes
    match their bytes; returns each tensor's shape.

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
    shapes: dict[str, tuple[int, ...]] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        offsets = info.get("data_offsets") if isinstance(info, dict) else None
        shape = info.get("shape") if isinstance(info, dict) else None
        if (
            not isinstance(offsets, list)
            or len(offsets) != 2
            or not all(isinstance(o, int) and o >= 0 for o in offsets)
            or not isinstance(shape, list)
            or not all(isinstance(d, int) and d >= 0 for d in shape)
        ):
            raise InputError(f"{path}: corrupt safetensors header (tensor {str(name)[:80]!r})")
        width = DTYPE_BYTES.get(str(info.get("dtype")))
        if width is not None and math.prod(shape) * width != offsets[1] - offsets[0]:
            raise InputError(
                f"{path}: corrupt safetensors header (tensor {str(name)[:80]!r}: shape {shape} does not match "
                f"its {offsets[1] - offsets[0]:,} bytes)"
            )
        end = max(end, offsets[1])
        shapes[str(name)] = tuple(shape)
    if 8 + n + end > size:
        raise InputError(
            f"{path}: truncated safetensors file ({size:,} bytes, its tensors need {8 + n + end:,})"
        )
    return shapes


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


def check_tokenizer_files(model_dir: str) -> None:
    """Every tokenizer file of a local directory is at most :data:`MAX_TOKENIZER_BYTES` (a 436 MB
    ``vocab.json`` would take gigabytes to parse)."""
    for name in TOKENIZER_FILE_NAMES:
        path = os.path.join(model_dir, name)
        if os.path.isfile(path) and os.path.getsize(path) > MAX_TOKENIZER_BYTES:
            raise InputError(
                f"{path}: {os.path.getsize(path):,} bytes, larger than any real tokenizer file "
                f"({MAX_TOKENIZER_BYTES >> 20} MiB); refusing to read it"
            )


def _layer_keys(config) -> list[str]:
    """The config's layer counts (``num_hidden_layers``, ``n_layer``, ``decoder_layers`` ...)."""
    keys = []
    for key, value in config.to_dict().items():
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            if key in ("n_layer", "n_layers", "num_layers") or key.endswith("_layers"):
                keys.append(key)
    return keys


def _meta_model(config):
    """The model ``config`` names (its first ``architectures`` class that transformers ships, else the base
    model) on the meta device: shapes only, no memory."""
    import torch
    import transformers
    from transformers import AutoModel, PreTrainedModel

    names = getattr(config, "architectures", None) or []
    cls = getattr(transformers, str(names[0]), None) if names else None
    with torch.device("meta"):
        if isinstance(cls, type) and issubclass(cls, PreTrainedModel):
            return cls._from_config(config)
        return AutoModel.from_config(config, trust_remote_code=False)


def _count(model) -> int:
    return sum(t.numel() for t in model.parameters()) + sum(t.numel() for t in model.buffers())


def _first_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}"


def check_config_fits_weights(model_dir: str, shapes: dict[str, tuple[int, ...]]) -> None:
    """Refuse a ``config.json`` that describes a model other than its weights (``shapes``: the safetensors
    headers), or one transformers cannot build (a nested ``text_config`` a text model does not expect), before
    anything is allocated: see the module docstring."""
    import copy

    from transformers import AutoConfig

    where = os.path.join(model_dir, "config.json")
    try:
        config = AutoConfig.from_pretrained(model_dir, trust_remote_code=False)
    except Exception as exc:  # noqa: BLE001 - transformers raises many types for a config it cannot read
        raise InputError(f"{where}: unreadable model config ({str(exc).splitlines()[0][:200]})") from None
    layers = {key: getattr(config, key) for key in _layer_keys(config)}
    models = []
    try:
        for key in [None, *layers]:  # every stack at one layer, then each stack at two
            small = copy.deepcopy(config)
            for name in layers:
                setattr(small, name, 2 if name == key else 1)
            models.append(_meta_model(small))
    except Exception:  # noqa: BLE001 - some architectures cannot be built small: build it whole (shapes only)
        try:
            models, layers = [_meta_model(config)], {}
        except Exception as exc:  # noqa: BLE001 - what from_pretrained would raise, after the checks
            raise InputError(
                f"{where}: transformers cannot build the model this config describes ({_first_line(exc)}); "
                "refusing the model"
            ) from None
    one = models[0]
    prefix = getattr(one, "base_model_prefix", "") + "."

    def bare(name: str) -> str:  # a base model's weights have no prefix, a model with a head has one
        return name[len(prefix) :] if name.startswith(prefix) else name

    held = {bare(n): s for n, s in shapes.items()}
    for name, tensor in [*one.named_parameters(), *one.named_buffers()]:
        shape = held.get(bare(name))
        if shape is not None and tuple(tensor.shape) != shape:
            raise InputError(
                f"{where}: the config makes {bare(name)} {list(tensor.shape)} but the weights hold {list(shape)}; "
                "the config does not describe these weights, refusing the model"
            )
    described = _count(one) + sum(
        (_count(model) - _count(one)) * (layers[key] - 1)
        for key, model in zip(layers, models[1:], strict=True)
    )
    weights = sum(math.prod(s) for s in shapes.values())
    if described > weights + SLACK_PARAMETERS:
        raise InputError(
            f"{where}: the config describes a model of {described:,} parameters but the weights hold "
            f"{weights:,}; refusing the model (its config does not describe these weights)"
        )


def check_model_files(model_dir: str) -> None:
    """Everything above, for a local model directory, before transformers reads any of it."""
    if not os.path.isdir(model_dir):
        raise InputError(f"{model_dir}: model directory does not exist")
    if not os.path.exists(os.path.join(model_dir, "config.json")):
        raise InputError(f"{model_dir}: no config.json, not a Hugging Face model directory")
    check_no_code(model_dir)
    shapes: dict[str, tuple[int, ...]] = {}
    for path in weight_files(model_dir):
        shapes.update(check_safetensors(path))
    check_tokenizer_files(model_dir)
    check_config_fits_weights(model_dir, shapes)
