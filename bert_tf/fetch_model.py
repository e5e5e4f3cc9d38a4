"""python -m bert_tf.fetch_model NAME --output_dir=DIR: a checkpoint by name.

The code lives in `bert_tf.cli.fetch_model`.
"""

from bert_tf.cli.fetch_model import run

if __name__ == "__main__":
  run()
