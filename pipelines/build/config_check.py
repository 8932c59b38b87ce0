"""Reading and checking a build config before the first stage runs: bounded YAML, each value's type, range.

:func:`load_config` reads a config of at most :data:`MAX_CONFIG_BYTES`, strict UTF-8, with ``yaml.SafeLoader``
(plain data, no Python objects) and at most :data:`MAX_NODES` values once aliases are expanded (a few hundred
bytes of nested aliases would otherwise expand to gigabytes), then checks the types of the top-level values.
:func:`check_stage_options` parses every stage's flags with that command's own parser and option checks
(``check_options(args)`` of the command module), so ``k: "ten"``, ``k: 0``, ``block_sizes: [0]`` or
``similarity_threshold: 2`` stop the build before any work, with one line naming the key and the file::

    error: my.yaml: neighbors.k: invalid int value: 'ten'
"""

from __future__ import annotations

import argparse
import importlib
import os
import re

import yaml

from schemas.records import InputError

MAX_CONFIG_BYTES = 1 << 20  # a build config is a page of text
MAX_NODES = 100_000  # YAML values after alias expansion
MAX_TEXT = 1000  # characters of a card's name or licence
SCALARS = (str, int, float, bool, type(None))


def _expanded_size(node: yaml.Node, sizes: dict[int, int], open_nodes: set[int]) -> int:
    """Values under ``node`` with every alias expanded (memoised per node, so linear in the document)."""
    key = id(node)
    if key in sizes:
        return sizes[key]
    if key in open_nodes:
        raise ValueError("a recursive alias")
    open_nodes.add(key)
    if isinstance(node, yaml.SequenceNode):
        size = 1 + sum(_expanded_size(child, sizes, open_nodes) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        size = 1 + sum(
            _expanded_size(k, sizes, open_nodes) + _expanded_size(v, sizes, open_nodes) for k, v in node.value
        )
    else:
        size = 1
    open_nodes.discard(key)
    sizes[key] = size
    if size > MAX_NODES:
        raise ValueError(f"more than {MAX_NODES:,} values once its aliases are expanded")
    return size


def parse_yaml(text: str, path: str):
    """``yaml.safe_load`` with a bound on alias expansion; every fault is one :class:`InputError` line.

    >>> parse_yaml("a: &x [1, 2]\\nb: *x", "c.yaml")
    {'a': [1, 2], 'b': [1, 2]}
    """
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node, {}, set())
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    except ValueError as exc:
        raise InputError(f"{path}: refused, the YAML holds {exc}") from None
    except RecursionError:
        raise InputError(f"{path}: refused, the YAML is nested too deeply") from None
    finally:
        loader.dispose()


def load_config(path: str) -> dict:
    """A build config: a regular file of at most :data:`MAX_CONFIG_BYTES`, UTF-8, bounded YAML, a mapping
    whose top-level values have the right types."""
    if not os.path.isfile(path):
        raise InputError(f"{path}: no such config file")
    if os.path.getsize(path) > MAX_CONFIG_BYTES:
        raise InputError(f"{path}: larger than {MAX_CONFIG_BYTES >> 10} KiB, not a build config")
    with open(path, "rb") as f:
        data = f.read(MAX_CONFIG_BYTES + 1)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        ) from None
    config = parse_yaml(text, path)
    if not isinstance(config, dict):
        raise InputError(f"{path}: expected a mapping at the top level")
    check_types(config, path)
    return config


def _fault(path: str, key: str, message: str) -> InputError:
    return InputError(f"{path}: {key}: {message}")


def _type_name(value) -> str:
    return type(value).__name__ if value is not None else "null"


def _check_flat(values, path: str, where: str, nested: tuple[str, ...] = ()) -> None:
    """A mapping of flag values: scalars or lists of scalars (``nested`` keys may also map to scalars)."""
    if values is None:
        return
    if not isinstance(values, dict):
        raise _fault(path, where, f"must be a mapping, got {_type_name(values)}")
    for key, value in values.items():
        if not isinstance(key, str):
            raise _fault(path, f"{where}.{key}", "keys must be text")
        items = (
            value
            if isinstance(value, list)
            else list(value.values())
            if key in nested and isinstance(value, dict)
            else [value]
        )
        if not all(isinstance(v, SCALARS) for v in items):
            raise _fault(
                path, f"{where}.{key}", f"must be a number, text or a list of them, got {value!r:.80}"
            )


def check_types(config: dict, path: str) -> None:
    """Types of the top-level values (the stages check their own flags: :func:`check_stage_options`)."""
    seed = config.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise _fault(path, "seed", f"must be a whole number >= 0, got {seed!r:.80}")
    for key in ("base", "out"):
        if key in config and not isinstance(config[key], str):
            raise _fault(path, key, f"must be a path, got {_type_name(config[key])}")
    sources = config.get("sources")
    if isinstance(sources, dict):
        for name, spec in sources.items():
            if not isinstance(name, str):
                raise _fault(path, f"sources.{name}", "source names must be text")
            if not isinstance(spec, dict):
                continue  # check_config names the fault
            for key in ("inputs", "history"):
                paths = spec.get(key)
                if paths is not None and not (
                    isinstance(paths, list) and all(isinstance(p, str) for p in paths)
                ):
                    raise _fault(path, f"sources.{name}.{key}", "must be a list of paths")
            _check_flat(spec.get("options"), path, f"sources.{name}.options")
    for section in ("neighbors", "intruders", "shuffle"):
        _check_flat(config.get(section), path, section, nested=("sample",))
    card = config.get("card")
    _check_flat(card, path, "card")
    for key in ("name", "license"):
        value = (card or {}).get(key)
        if value is not None and (not isinstance(value, str) or len(value) > MAX_TEXT):
            raise _fault(path, f"card.{key}", f"must be text of at most {MAX_TEXT} characters")


class _Refused(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """A parser that raises instead of printing usage and exiting."""

    def error(self, message: str):
        raise _Refused(message)


_FLAG = re.compile(r"--([A-Za-z0-9][A-Za-z0-9-]*)")


def _config_key(stage: str, flag: str, raw: dict) -> str:
    """The config key behind a stage's flag: ``neighbors/cnn`` + ``--k`` -> ``neighbors.k``."""
    key = flag.replace("-", "_")
    section, _, source = stage.partition("/")
    if section in ("ingest", "ingest-history"):
        where = f"sources.{source.split('/', 1)[0]}.options"
        values = ((raw.get("sources") or {}).get(source.split("/", 1)[0]) or {}).get("options") or {}
    else:
        where, values = section, raw.get(section) or {}
    if key in values or str(flag) in values:
        return f"{where}.{key}"
    if key == "seed":
        return "seed"
    if key == "k":
        return "neighbors.k"
    return f"{where}.{key}"


def check_stage_options(stages, raw: dict, path: str) -> None:
    """Parse every command stage's flags with the command's own parser and run its ``check_options(args)``
    (the checks that need no input); a fault is one line naming the config key and ``path``.

    ``stages``: :func:`pipelines.build.command.plan` of the config (``Stage.argv`` is an ``incoherent`` command line).
    """
    from pipelines.cli import COMMANDS, selected_module

    for stage in stages:
        module_name = selected_module(stage.argv) if stage.make is None else None
        if module_name is None:
            continue
        words = next(c.words for c in COMMANDS if c.module == module_name)
        module = importlib.import_module(module_name)
        parser = _Parser(prog=" ".join(words), add_help=False)
        module.add_arguments(parser)
        try:
            args = parser.parse_args(stage.argv[len(words) :])
            check = getattr(module, "check_options", None)
            if check is not None:
                check(args)
        except (_Refused, InputError) as exc:
            message = str(exc)
            found = _FLAG.search(message)
            if not found:
                raise InputError(f"{path}: {stage.name}: {message}") from None
            key = _config_key(stage.name, found.group(1), raw)
            detail = re.sub(r"^(argument )?--[A-Za-z0-9/-]+:\s*", "", message)
            raise InputError(f"{path}: {key}: {detail}") from None


def check_before_run(raw: dict, resolved: dict, stages, path: str) -> None:
    """Everything a build can check before its first stage: the stages' flags and the filter model."""
    check_stage_options(stages, raw, path)
    model = resolved["intruders"].get("filter", "none")
    if model not in (None, "none"):
        from filters.handler import check_model_dir

        check_model_dir(str(model))
