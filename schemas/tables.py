"""Explicit pyarrow schemas, one per output table.

Rows travel between Beam stages as plain ``dict`` objects whose keys are exactly the field names of one of
these schemas; :func:`schema_for` maps an output config name (``documents-wikipedia``, ``shuffle-cnn``,
``rejected/ingest-wikipedia`` ...) to its schema.
"""

from __future__ import annotations

import pyarrow as pa

SCHEMA_VERSION = "2"  # 2: shuffle rows gained `permutation`; the `scores` table

_STR_LIST = pa.list_(pa.string())


def _versioned(name: str, fields: list[pa.Field], version: str | None = None) -> pa.Schema:
    """A schema with the project's schema version and, for tables added later, the table's own version
    (``incoherent.table_version``; bump it when a column of that table changes)."""
    metadata = {b"incoherent.table": name.encode(), b"incoherent.schema_version": SCHEMA_VERSION.encode()}
    if version is not None:
        metadata[b"incoherent.table_version"] = version.encode()
    return pa.schema(fields, metadata=metadata)


DOCUMENT_SCHEMA = _versioned(
    "documents",
    [
        pa.field("id", pa.string(), nullable=False),  # wikipedia:<page id>, cnn:<story sha1>, <name>:<id>
        pa.field("source", pa.string(), nullable=False),
        pa.field("title", pa.string()),
        pa.field("url", pa.string()),
        pa.field("sentences", _STR_LIST, nullable=False),
        pa.field("dump", pa.string()),  # file the document came from
        pa.field("revision_id", pa.int64()),
        pa.field("timestamp", pa.string()),  # ISO 8601 revision time where known
    ],
)

SHUFFLE_SCHEMA = _versioned(
    "shuffle",
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("block_size", pa.int32(), nullable=False),
        pa.field("permutation", pa.int32(), nullable=False),  # 0..N-1 with `shuffle --permutations N`
        pa.field("original", _STR_LIST, nullable=False),
        pa.field("shuffled", _STR_LIST, nullable=False),
        pa.field(
            "block_order", pa.list_(pa.int32()), nullable=False
        ),  # shuffled[i-th block] = original block j
        pa.field("split", pa.string(), nullable=False),
    ],
)

NEIGHBORS_SCHEMA = _versioned(
    "neighbors",
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field(
            "neighbors",
            pa.list_(pa.struct([pa.field("id", pa.string()), pa.field("score", pa.float32())])),
            nullable=False,
        ),
    ],
)

INTRUDER_SCHEMA = _versioned(
    "intruder",
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("title", pa.string()),
        pa.field("sentences", _STR_LIST, nullable=False),  # the document as a model sees it
        pa.field("label", pa.int64(), nullable=False),  # 0 coherent, 1 intruder
        pa.field("intruder_index", pa.int32(), nullable=False),  # -1 if coherent, never 0
        pa.field("original_sentence", pa.string()),
        pa.field("intruder_sentence", pa.string()),
        pa.field("intruder_source_id", pa.string()),
        pa.field("similarity", pa.float32()),  # TF-IDF cosine of original and intruder sentence
        pa.field("filter_score", pa.float32()),  # adversarial model's intruder probability, null without it
        pa.field("difficulty", pa.string()),  # hard | easy | unfiltered, null for coherent rows
        pa.field("num_candidates", pa.int32(), nullable=False),
        pa.field("fallback_reason", pa.string()),  # why a document meant to be incoherent stayed coherent
        pa.field("dump", pa.string()),
        pa.field("revision_id", pa.int64()),
        pa.field("split", pa.string(), nullable=False),
    ],
)

CANDIDATE_SCHEMA = _versioned(
    "candidates",
    [
        pa.field("id", pa.string(), nullable=False),  # the document that receives the intruder
        pa.field("source", pa.string(), nullable=False),
        pa.field("split", pa.string(), nullable=False),
        pa.field("replaced_index", pa.int32(), nullable=False),
        pa.field("original_sentence", pa.string(), nullable=False),
        pa.field("candidate_sentence", pa.string(), nullable=False),
        pa.field("candidate_source_id", pa.string(), nullable=False),
        pa.field("candidate_index", pa.int32(), nullable=False),  # sentence position in the neighbour
        pa.field("neighbor_rank", pa.int32(), nullable=False),
        pa.field("neighbor_score", pa.float32(), nullable=False),
        pa.field("similarity", pa.float32(), nullable=False),
        pa.field("filter_score", pa.float32()),
        pa.field("difficulty", pa.string()),
    ],
)

SCORES_SCHEMA = _versioned(
    "scores",
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("block_size", pa.int32(), nullable=False),
        pa.field("permutation", pa.int32(), nullable=False),
        pa.field("score_original", pa.float64(), nullable=False),  # mean NLL per scored token, nats
        pa.field("score_shuffled", pa.float64(), nullable=False),
        pa.field("tokens_original", pa.int32(), nullable=False),  # tokens scored
        pa.field("tokens_shuffled", pa.int32(), nullable=False),
        pa.field("correct", pa.bool_(), nullable=False),  # score_shuffled - score_original > 1e-6
        pa.field("tie", pa.bool_(), nullable=False),  # |score_shuffled - score_original| <= 1e-6
    ],
)

PROBE_EDIT = pa.struct(
    [
        pa.field("start", pa.int32()),  # character span [start, end) in the intruder sentence
        pa.field("end", pa.int32()),
        pa.field("before", pa.string()),  # the characters replaced
        pa.field("after", pa.string()),  # what replaced them
    ]
)

PROBE_SCHEMA = _versioned(
    "probe",
    [
        pa.field(
            "id", pa.string(), nullable=False
        ),  # the document's id (INSteD JSONL: <file name>:<file_id>)
        pa.field("source", pa.string(), nullable=False),
        pa.field("split", pa.string(), nullable=False),
        pa.field("phenomenon", pa.string(), nullable=False),  # gender, animacy-down, ... (one per config)
        pa.field("sentences", _STR_LIST, nullable=False),  # the document with the probed intruder in place
        pa.field("label", pa.int64(), nullable=False),  # always 1: a probe is an incoherent document
        pa.field("intruder_index", pa.int32(), nullable=False),
        pa.field("original_sentence", pa.string()),  # the sentence the intruder replaced
        pa.field("intruder_sentence", pa.string(), nullable=False),  # the intruder before the probe
        pa.field("probed_sentence", pa.string(), nullable=False),  # the intruder after the probe
        pa.field("edits", pa.list_(PROBE_EDIT), nullable=False),
        pa.field("source_id", pa.string(), nullable=False),  # the row's id in its input (INSteD: file_id)
        pa.field("file_id", pa.int64()),  # INSteD's file_id (export insted's numbering for a build)
        pa.field("ctx", pa.string()),  # an INSteD record's own ctx, unchanged (null for a build's document)
    ],
    version="2",
)

REJECTED_SCHEMA = _versioned(
    "rejected",
    [
        pa.field("stage", pa.string(), nullable=False),
        pa.field("reason", pa.string(), nullable=False),
        pa.field("id", pa.string()),
        pa.field("source", pa.string()),
        pa.field("detail", pa.string()),  # human-readable explanation (file, offset, parser message)
        pa.field("record", pa.string()),  # JSON of the rejected record, truncated to a few KB
    ],
)

SCHEMAS: dict[str, pa.Schema] = {
    "documents": DOCUMENT_SCHEMA,
    "shuffle": SHUFFLE_SCHEMA,
    "neighbors": NEIGHBORS_SCHEMA,
    "intruder": INTRUDER_SCHEMA,
    "candidates": CANDIDATE_SCHEMA,
    "scores": SCORES_SCHEMA,
    "rejected": REJECTED_SCHEMA,
    "probe": PROBE_SCHEMA,
}


def schema_for(config: str) -> pa.Schema:
    """Schema of an output config: ``schema_for("shuffle-cnn") is SHUFFLE_SCHEMA``."""
    head = config.split("/", 1)[0].split("-", 1)[0]
    try:
        return SCHEMAS[head]
    except KeyError:
        raise ValueError(f"no schema for output config {config!r}; known tables: {sorted(SCHEMAS)}") from None


def empty_row(schema: pa.Schema) -> dict:
    """A row with every column of ``schema`` set to None, to be filled in."""
    return {name: None for name in schema.names}
