"""SQuAD: JSON -> examples -> doc-span features -> TFRecord + sidecar, and
the predictions/evaluation that turn logits back into answers.
`python -m data_prep.squad` is the featurization command (`__main__.py`)."""
