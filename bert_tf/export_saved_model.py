"""python -m bert_tf.export_saved_model: a trained model -> raw-text SavedModel.

The entry point; the code lives in `bert_tf.cli.export_saved_model`.
"""

from bert_tf.cli.export_saved_model import run

if __name__ == "__main__":
  run()
