"""Sentence(-pair) classification: GLUE/XNLI/TSV readers -> features ->
TFRecords. `python -m data_prep.classifier` is the command (`__main__.py`)."""
