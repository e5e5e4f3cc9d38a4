"""Multiple choice (SWAG and your own JSON lines): files -> examples ->
per-choice features -> TFRecords, without TensorFlow. run_multiple_choice.py
is the command."""
