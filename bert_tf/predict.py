"""python -m bert_tf.predict: raw text -> predictions with a SavedModel.

The entry point; the code lives in `bert_tf.cli.predict`.
"""

from bert_tf.cli.predict import run

if __name__ == "__main__":
  run()
