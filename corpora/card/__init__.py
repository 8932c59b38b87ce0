"""Dataset card (Hugging Face ``README.md``) for a finished build, from its Parquet tables and run summaries.

The card's YAML lists every config and split with explicit ``data_files`` and the features of our explicit
schemas (``label`` as a ``ClassLabel`` with names ``coherent`` / ``intruder``), marks the main intruder config
``default: true`` and derives the licence from the sources, so ``load_dataset(DIR)`` works on the folder as it
is, locally or on the Hub. The body holds INSteD-style statistics (read column-wise from the Parquet files,
:mod:`corpora.card.stats`), PNG figures under ``figures/`` (:mod:`corpora.card.figures`) and the provenance of
the build without local paths (:mod:`corpora.provenance`). Sanitised copies of the run summaries go to
``summaries/`` so that what is published says how it was built. Nothing in the card depends on the time of the
run, so the same build gives the same card.

Where it lives: :mod:`corpora.card.inputs` (reading the build), :mod:`corpora.card.metadata` (the YAML and fixed
text), :mod:`corpora.card.statistics` (statistics, funnel, figures; :mod:`corpora.card.stats` reads the tables,
:mod:`corpora.card.figures` draws), :mod:`corpora.card.provenance`, :mod:`corpora.card.probes` and
:mod:`corpora.card.render` (the card put together and written).
"""
