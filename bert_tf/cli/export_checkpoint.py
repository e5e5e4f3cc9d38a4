r"""Export a run_pretraining.py checkpoint as an original `bert_model.ckpt`.

Writes the latest checkpoint of a run (or a given `ckpt-N` prefix) in the
original TF1 layout: `bert/*`, `cls/predictions/*`, `cls/seq_relationship/*`
and `global_step`, no Adam slots, plus `bert_config.json`. The original
code, `--init_checkpoint` of every bert_tf script and
`bert_tf.convert_checkpoint` read the result (see `engine_checkpoint.py`).

    python -m bert_tf.export_checkpoint --model_dir=/tmp/pretraining_output \
      --bert_config_file=bert_config.json --output_dir=/tmp/exported
"""

import os

from absl import flags

from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import InputError
from bert_tf.io_utils import require_file
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.runtime import app

FLAGS = flags.FLAGS
# Loaded when the command runs: --help answers at once.
engine_checkpoint = app.lazy_import("bert_tf.checkpoints.engine_checkpoint")
pretraining = app.lazy_import("bert_tf.tasks.pretraining")


def define_flags():
  """Defines this command's flags (the original names and defaults)."""
  flags.DEFINE_string(
    "model_dir",
    None,
    "run_pretraining.py --output_dir (its latest checkpoint "
    "is exported) or a `ckpt-N` prefix.",
  )
  flags.DEFINE_string("bert_config_file", None, "The config of that run.")
  flags.DEFINE_string(
    "output_dir", None, "Folder for bert_model.ckpt and bert_config.json."
  )


def main(argv):
  del argv
  for name in ("model_dir", "bert_config_file", "output_dir"):
    if not FLAGS[name].value:
      raise InputError("--%s is required" % name)
  require_file(FLAGS.bert_config_file, "bert_config_file")
  config = BertConfig.from_json_file(FLAGS.bert_config_file)
  engine_checkpoint.export_tf1_checkpoint(
    pretraining.PretrainingModel(config), FLAGS.model_dir, FLAGS.output_dir
  )
  with atomic_output(os.path.join(FLAGS.output_dir, "bert_config.json")) as f:
    f.write(config.to_json_string())


def run():
  """Console-script entry point."""
  define_flags()
  app.run_app(main)


if __name__ == "__main__":
  run()
