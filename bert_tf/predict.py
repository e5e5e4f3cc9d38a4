r"""python -m bert_tf.predict: raw text -> predictions with a SavedModel.

    python -m bert_tf.predict --export_dir=DIR --input_file=in.jsonl \
      --output_file=out.jsonl

The code and the full help live in `bert_tf.cli.predict`.
"""

from bert_tf.cli.predict import run

if __name__ == "__main__":
  run()
