"""Record types and explicit Parquet schemas for every output of `incoherent`.

Every Parquet file the pipeline writes uses one of the schemas below; nothing is inferred from the first row.
Bump ``SCHEMA_VERSION`` whenever a column is added, removed or changes meaning.
"""

from incoherent.schemas.tables import (
    CANDIDATE_SCHEMA,
    DOCUMENT_SCHEMA,
    INTRUDER_SCHEMA,
    NEIGHBORS_SCHEMA,
    PROBE_SCHEMA,
    REJECTED_SCHEMA,
    SCHEMA_VERSION,
    SCHEMAS,
    SCORES_SCHEMA,
    SHUFFLE_SCHEMA,
    schema_for,
)

__all__ = [
    "CANDIDATE_SCHEMA",
    "DOCUMENT_SCHEMA",
    "INTRUDER_SCHEMA",
    "NEIGHBORS_SCHEMA",
    "PROBE_SCHEMA",
    "REJECTED_SCHEMA",
    "SCHEMA_VERSION",
    "SCHEMAS",
    "SCORES_SCHEMA",
    "SHUFFLE_SCHEMA",
    "schema_for",
]
