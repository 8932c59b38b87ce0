"""The build config: read (bounded YAML), resolved (every input found) and checked, all before the first stage.

:func:`load_config` reads a config of at most :data:`MAX_CONFIG_BYTES`, strict UTF-8, with ``yaml.SafeLoader``
(plain data, no Python objects) and at most :data:`MAX_NODES` values once aliases are expanded (a few hundred
bytes of nested aliases would otherwise expand to gigabytes), then checks the types of the top-level values.
:func:`check_config` resolves every input path (against ``base``, then the current directory; remote ones
through Beam's filesystems) and checks that every key of a section is a flag of the command it is passed to
(:data:`SECTION_COMMANDS`, :data:`INGEST_MODULES`: derived from :data:`pipelines.commands.COMMANDS`).
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
from importlib import resources

import yaml

from incoherent.corpora.sampling import parse_sample
from incoherent.fileio.paths import check_name
from incoherent.pipelines.build.plan import history_label
from incoherent.pipelines.commands import COMMANDS, INGEST_KINDS, module_of
from incoherent.pipelines.runtime import storage
from incoherent.pipelines.runtime.model_stack import require_model_stack
from incoherent.schemas.records import InputError

MAX_CONFIG_BYTES = 1 << 20  # a build config is a page of text
MAX_NODES = 100_000  # YAML values after alias expansion
MAX_TEXT = 1000  # characters of a card's name or licence
SCALARS = (str, int, float, bool, type(None))
CORPORA = ("intruders", "shuffle")  # what a config may ask for under `corpora` (default: both)

# Config sections whose keys become flags of one command, and the flags the build sets itself.
# From the one table of commands (pipelines.commands.COMMANDS): config section -> (module, keys the build sets).
SECTION_COMMANDS = {
    "index": (module_of("index"), {"out", "overwrite"}),
    "neighbors": (module_of("neighbors"), {"out", "index", "overwrite", "queries"}),
    "intruders": (module_of("intruders"), {"out", "index", "neighbors", "history", "overwrite", "kind"}),
    "shuffle": (module_of("shuffle"), {"out", "overwrite"}),
}
INGEST_MODULES = {c.words[1]: c.module for c in COMMANDS if c.words[0] == "ingest"}  # source kind -> module
KINDS = INGEST_KINDS  # ("wikipedia", "cnn", "text")


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
        _check_unique_keys(node)
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


def _check_unique_keys(node: yaml.MappingNode) -> None:
    """A key written twice in one mapping is an error (YAML would keep the last silently); ``<<`` merges
    may still override."""
    seen: set[tuple[str, str]] = set()
    for key, _ in node.value:
        if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
            continue
        if (key.tag, key.value) in seen:
            raise ValueError(f"the key {key.value!r} twice in one mapping (line {key.start_mark.line + 1})")
        seen.add((key.tag, key.value))


def parse_yaml(text: str, path: str):
    """``yaml.safe_load`` with a bound on alias expansion and no key twice in a mapping; every fault is one
    :class:`InputError` line.

    >>> parse_yaml("a: &x [1, 2]\\nb: *x", "c.yaml")
    {'a': [1, 2], 'b': [1, 2]}
    >>> parse_yaml("k: 1\\nk: 2", "c.yaml")
    Traceback (most recent call last):
    ...
    incoherent.errors.InputError: c.yaml: refused, the YAML holds the key 'k' twice in one mapping (line 2)
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


def check_corpora(value, path: str) -> list[str]:
    """``corpora: [shuffle]`` -> the corpora a build makes, in :data:`CORPORA` order (absent: all of them).

    >>> check_corpora(["shuffle", "intruders"], "c.yaml"), check_corpora(None, "c.yaml")
    (['intruders', 'shuffle'], ['intruders', 'shuffle'])
    """
    if value is None:
        return list(CORPORA)
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        raise _fault(path, "corpora", f"must be a list of {' and '.join(CORPORA)}, got {value!r:.80}")
    unknown = [v for v in values if v not in CORPORA]
    if unknown:
        raise _fault(path, "corpora", f"unknown corpus {unknown[0]!r} (known: {', '.join(CORPORA)})")
    return [c for c in CORPORA if c in values]


def check_types(config: dict, path: str) -> None:
    """Types of the top-level values (the stages check their own flags: :func:`check_stage_options`)."""
    check_corpora(config.get("corpora"), path)
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
    for section in ("index", "neighbors", "intruders", "shuffle"):
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

    ``stages``: :func:`pipelines.build.plan.plan` of the config (``Stage.argv`` is an ``incoherent`` command line).
    """
    from incoherent.pipelines.commands import COMMANDS, selected_module

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
        from incoherent.filters.handler import check_model_dir

        check_model_dir(str(model))


def default_config_path() -> str:
    return str(resources.files("incoherent.pipelines").joinpath("configs/default.yaml"))


def bundled_base(config_dir: str, base: str) -> str:
    """``base`` of a config bundled with the package (``pipelines/configs/``): the repository root in a clone
    (where ``samples/`` lies), else the installed package's folder, which holds the samples as
    ``pipelines/samples/`` (a wheel or ``pip install .``); ``base`` as given for every other config."""
    package = str(resources.files("incoherent.pipelines"))
    bundled = os.path.normcase(os.path.realpath(config_dir)) == os.path.normcase(
        os.path.realpath(os.path.join(package, "configs"))
    )
    if (
        bundled
        and not os.path.isdir(os.path.join(base, "samples"))
        and os.path.isdir(os.path.join(package, "samples"))
    ):
        return package
    return base


def resolve_path(value: str, base: str, config_path: str, key: str) -> str:
    """An input path: absolute as given; relative against ``base``, then the current directory."""
    if storage.is_remote(value):  # gs://, s3://: checked through Beam's filesystems
        from incoherent.pipelines.runtime.storage import BeamFiles

        files = BeamFiles()
        if files.isfile(str(value)) or files.isdir(str(value)):
            return str(value)
        raise InputError(f"{config_path}: {key}: {value} not found")
    path = os.path.expanduser(str(value))
    if os.path.isabs(path):
        tried = [path]
    else:
        tried = [os.path.normpath(os.path.join(base, path)), os.path.abspath(path)]
    for candidate in tried:
        if os.path.exists(candidate):
            return candidate
    raise InputError(f"{config_path}: {key}: {value} not found (tried {', '.join(dict.fromkeys(tried))})")


def _section(config: dict, name: str, config_path: str) -> dict:
    value = config.get(name) or {}
    if not isinstance(value, dict):
        raise InputError(f"{config_path}: `{name}` must be a mapping")
    return value


def command_flags(module: str) -> set[str]:
    """The long flags of one command, without dashes: ``{"block_sizes", "seed", ...}``."""
    parser = argparse.ArgumentParser(add_help=False)
    importlib.import_module(module).add_arguments(parser)
    return {
        s[2:].replace("-", "_")
        for action in parser._actions
        for s in action.option_strings
        if s.startswith("--")
    }


def check_keys(
    options: dict, module: str, where: str, config_path: str, reserved: set[str] = frozenset()
) -> None:
    """Every key of a config section must be a flag of the command it is passed to (before any work)."""
    known = command_flags(module) - set(reserved)
    for key in options:
        if str(key).replace("-", "_") not in known:
            command = " ".join(next(c.words for c in COMMANDS if c.module == module))
            raise InputError(
                f"{config_path}: {where}.{key}: unknown key (`incoherent {command}` has no "
                f"--{str(key).replace('_', '-')}; known: {', '.join(sorted(known))})"
            )


STAGE_SECTIONS = ("index", "neighbors", "intruders", "shuffle")  # config sections of a stage's flags
SOURCE_KEYS = {"kind", "inputs", "history", "options", "optional", "get", "license"}


def check_config(config: dict, config_path: str) -> dict:
    """The config with every input path resolved and checked; raises :class:`InputError` on the first fault."""
    known = {"base", "out", "seed", "corpora", "sources", *STAGE_SECTIONS, "card"}
    unknown = sorted(set(config) - known)
    if unknown:
        raise InputError(f"{config_path}: unknown keys {unknown} (known: {sorted(known)})")
    config_dir = os.path.dirname(os.path.abspath(config_path))
    base = bundled_base(config_dir, os.path.normpath(os.path.join(config_dir, str(config.get("base", ".")))))
    resolved, skipped = check_sources(config.get("sources"), base, config_path)
    sections = {name: _section(config, name, config_path) for name in STAGE_SECTIONS}
    for name, (module, reserved) in SECTION_COMMANDS.items():
        check_keys(sections[name], module, name, config_path, reserved)
    check_agreements(sections, config_path)
    card = _section(config, "card", config_path)
    unknown_card = sorted(set(card) - {"name", "license"})
    if unknown_card:
        raise InputError(f"{config_path}: card: unknown keys {unknown_card} (known: name, license)")
    for name in ("intruders", "shuffle"):
        check_samples(sections[name].get("sample"), name, resolved, skipped, config_path)
    sections["intruders"] = resolve_filter(sections["intruders"], base, config_path)
    return {
        "sources": resolved,
        **({"skipped_sources": skipped} if skipped else {}),
        "seed": int(config.get("seed", 0)),
        "corpora": check_corpora(config.get("corpora"), config_path),
        **sections,
        "card": {
            "name": str(card.get("name", "incoherent coherence corpora")),
            "license": str(card["license"]) if card.get("license") else None,  # None: from the sources
        },
    }


def check_sources(sources, base: str, config_path: str) -> tuple[dict, dict]:
    """``(resolved sources, skipped optional sources: why)``: every source's kind, keys and inputs checked."""
    if not isinstance(sources, dict) or not sources:
        raise InputError(f"{config_path}: `sources` must map source names to {{kind, inputs}}")
    resolved, skipped = {}, {}
    for name in sources:
        check_name(name, f"{config_path}: sources")  # a path is built from it: before any other check
    for name, spec in sources.items():
        checked = check_source(name, spec, base, config_path)
        if isinstance(checked, str):
            skipped[name] = checked
        else:
            resolved[name] = checked
    if not resolved:
        raise InputError(
            f"{config_path}: every source is optional and missing ({'; '.join(skipped.values())})"
        )
    return resolved, skipped


def check_source(name: str, spec, base: str, config_path: str) -> dict | str:
    """One source of any name: its kind (an ``ingest`` command: the kind, never the name, chooses what differs
    per source), inputs, history, options and licence, resolved; or why an optional source is skipped."""
    where = f"sources.{name}"
    if not isinstance(spec, dict):
        raise InputError(f"{config_path}: {where} must be a mapping with `kind` and `inputs`")
    kind = spec.get("kind")
    if kind not in KINDS:
        raise InputError(f"{config_path}: {where}.kind must be one of {list(KINDS)}, got {kind!r}")
    inputs = spec.get("inputs")
    if not isinstance(inputs, list) or not inputs:
        raise InputError(f"{config_path}: {where}.inputs must be a non-empty list of paths")
    history = spec.get("history") or []
    if history and kind != "wikipedia":
        raise InputError(f"{config_path}: {where}.history is only for Wikipedia dumps")
    unknown_keys = sorted(set(spec) - SOURCE_KEYS)
    if unknown_keys:
        raise InputError(f"{config_path}: {where}: unknown keys {unknown_keys}")
    options = spec.get("options") or {}
    if not isinstance(options, dict):
        raise InputError(f"{config_path}: {where}.options must map flag names to values")
    check_keys(options, INGEST_MODULES[kind], f"{where}.options", config_path, {"out", "overwrite", "source"})
    for path in history:
        check_name(history_label(str(path)), f"{config_path}: {where}.history ({path}): its label")
    options, indexes = multistream_indexes(options, inputs, f"{where}.options", config_path)
    if spec.get("optional"):
        missing = missing_inputs(inputs + history + indexes, base)
        if missing:
            how = f"; get it: {spec['get']}" if spec.get("get") else ""
            return f"{where}: {', '.join(missing)} not found, optional source skipped{how}"
    source = {
        "kind": kind,
        "inputs": [resolve_path(p, base, config_path, f"{where}.inputs") for p in inputs],
        "history": [resolve_path(p, base, config_path, f"{where}.history") for p in history],
        "options": options,
    }
    if spec.get("license") is not None:  # the terms of the source's text, for the card
        terms = spec["license"]
        if not isinstance(terms, str) or not terms.strip() or len(terms) > MAX_TEXT:
            raise InputError(f"{config_path}: {where}.license: must be text of at most {MAX_TEXT} characters")
        source["license"] = terms.strip()
    if indexes:  # resolved like the inputs; the ingest stage gets one --multistream-index per dump
        source["multistream_index"] = [
            resolve_index(p, base, config_path, f"{where}.options.multistream_index") for p in indexes
        ]
    return source


def flag_default(module: str, key: str):
    """The default of one flag of a command (``flag_default(module_of("index"), "hash_size")`` -> 2**24)."""
    parser = argparse.ArgumentParser(add_help=False)
    importlib.import_module(module).add_arguments(parser)
    return parser.get_default(key)


def check_agreements(sections: dict[str, dict], config_path: str) -> None:
    """A stage's value that must be an earlier stage's (the module's ``AGREE_WITH``: ``neighbors.hash_size``
    is the index's, which ``neighbors`` reads from the index's ``index.json``) is refused before any work when
    the config sets it otherwise; it is set once, in the earlier stage's section (``index: {hash_size: ...}``)."""
    for name, (module, _reserved) in SECTION_COMMANDS.items():
        for key, earlier in getattr(importlib.import_module(module), "AGREE_WITH", {}).items():
            if sections[name].get(key) is None:
                continue
            theirs = sections[earlier].get(key, flag_default(SECTION_COMMANDS[earlier][0], key))
            if str(sections[name][key]) != str(theirs):
                raise _fault(
                    config_path,
                    f"{name}.{key}",
                    f"{sections[name][key]} differs from the {earlier} stage's {key} ({theirs}); set it once, "
                    f"as {earlier}.{key} (the {name} stage reads it from the {earlier}'s output)",
                )


def check_samples(sample, section: str, resolved: dict, skipped: dict, config_path: str) -> None:
    """``intruders.sample`` / ``shuffle.sample``: one sample for every source or one per (known) source."""
    if isinstance(sample, dict):
        for source, value in sample.items():
            if source in skipped:
                continue
            if source not in resolved:
                raise InputError(
                    f"{config_path}: {section}.sample.{source}: no such source ({sorted(resolved)})"
                )
            parse_sample(value, f"{config_path}: {section}.sample.{source}")
    elif sample is not None:
        parse_sample(sample, f"{config_path}: {section}.sample")


def resolve_filter(intruders: dict, base: str, config_path: str) -> dict:
    """``intruders.filter``: ``none``, a model folder (resolved like an input) or a Hub name in the local cache."""
    model = intruders.get("filter", "none")
    if model in (None, "none"):
        return intruders
    require_model_stack("build", f"intruders.filter in {config_path}")
    try:
        found = resolve_path(model, base, config_path, "intruders.filter")
    except InputError:  # not a folder: a Hub name in the local Hugging Face cache, or the error
        from incoherent.filters.model_source import cached_snapshot

        found = cached_snapshot(str(model))
        if found is None:
            raise
    return dict(intruders, filter=found)


def multistream_indexes(options: dict, inputs: list, where: str, config_path: str) -> tuple[dict, list[str]]:
    """A Wikipedia source's ``options`` without ``multistream_index``, and that key's paths (as written): one
    path, or a list with one per input, in the order of ``inputs``.

    >>> multistream_indexes({"multistream_index": "i.txt.bz2", "range_mb": 8}, ["d.xml.bz2"], "o", "b.yaml")
    ({'range_mb': 8}, ['i.txt.bz2'])
    """
    keys = [key for key in options if str(key).replace("-", "_") == "multistream_index"]
    if not keys:
        return options, []
    if len(keys) > 1:
        raise InputError(f"{config_path}: {where}: multistream_index given twice ({', '.join(keys)})")
    key, value = keys[0], options[keys[0]]
    paths = value if isinstance(value, list) else [value]
    if not paths or not all(isinstance(p, str) and p for p in paths):
        raise _fault(config_path, f"{where}.{key}", "must be a path, or a list of paths (one per input)")
    if len(paths) != len(inputs):
        raise _fault(
            config_path,
            f"{where}.{key}",
            f"{len(paths)} paths for {len(inputs)} inputs; give one per input, in the order of `inputs`",
        )
    return {k: v for k, v in options.items() if k != key}, paths


def resolve_index(value: str, base: str, config_path: str, key: str) -> str:
    """A multistream index path resolved like an input (:func:`resolve_path`); it must be a file."""
    path = resolve_path(value, base, config_path, key)
    is_file = storage.BeamFiles().isfile(path) if storage.is_remote(path) else os.path.isfile(path)
    if not is_file:
        raise InputError(
            f"{config_path}: {key}: {value} is not a file (a multistream index is one file per dump)"
        )
    return path


def missing_inputs(paths: list, base: str) -> list[str]:
    """The local paths of an optional source that are absent (against ``base``, then the current directory)."""
    out = []
    for value in paths:
        path = os.path.expanduser(str(value))
        if storage.is_remote(path):
            continue  # checked by resolve_path
        tried = [path] if os.path.isabs(path) else [os.path.join(base, path), os.path.abspath(path)]
        if not any(os.path.exists(t) for t in tried):
            out.append(str(value))
    return out


def config_inputs(config: dict) -> list[str]:
    """Every path a checked config reads: its sources' inputs, history and indexes, the filter model."""
    paths = [
        p
        for spec in config["sources"].values()
        for p in [*spec["inputs"], *spec["history"], *spec.get("multistream_index", [])]
    ]
    model = config["intruders"].get("filter", "none")
    return paths + ([] if model in (None, "none") else [str(model)])
