"""Named-entity recognition (token tagging): CoNLL files -> sentences ->
word-piece windows -> TFRecords, and predicted tags -> files and entity
metrics. Everything here is TensorFlow-free; `run_ner.py` is the script."""
