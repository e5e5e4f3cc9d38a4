"""The data_prep jobs as Apache Beam pipelines (`--runner`).

`pipeline` holds the shared driver; `pretraining` and `squad` run the same
per-shard / per-chunk functions as the single-process paths.
"""
