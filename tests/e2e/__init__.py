"""End-to-end runs: whole builds, distributed runners, object storage, pinned output bytes."""
