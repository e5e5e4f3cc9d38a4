r"""python -m bert_tf.export_saved_model: trained model -> raw-text SavedModel.

    python -m bert_tf.export_saved_model --task=classifier --checkpoint=RUN \
      --export_dir=DIR

The code and the full help live in `bert_tf.cli.export_saved_model`.
"""

from bert_tf.cli.export_saved_model import run

if __name__ == "__main__":
  run()
