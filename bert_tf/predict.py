r"""python -m bert_tf.predict: raw text -> predictions with a SavedModel.

    python -m bert_tf.predict --export_dir=DIR --input_file=in.jsonl|in.tsv \
      --output_file=out.jsonl [--batch_size=32]

The code lives in `bert_tf.cli.predict` (see its docstring).
"""

from absl import flags

from bert_tf.cli import predict
from bert_tf.cli import app

if __name__ == "__main__":
  predict.define_flags()
  # --helpshort lists this command's flags.
  flags.adopt_module_key_flags(predict)
  app.run_app(predict.main)
