r"""python -m bert_tf.export_saved_model: trained model -> raw-text SavedModel.

    python -m bert_tf.export_saved_model \
      --task=classifier|squad|ner|multiple_choice|encoder|pretraining \
      --checkpoint=<run output_dir or bert_model.ckpt> \
      --bert_config_file=... --vocab_file=... \
      [--task_name=mrpc | --labels=a,b,c] --export_dir=DIR

The code lives in `bert_tf.cli.export_saved_model` (see its docstring).
"""

from absl import flags

from bert_tf.cli import bert_flags
from bert_tf.cli import export_saved_model
from bert_tf.cli import app

if __name__ == "__main__":
  export_saved_model.define_flags()
  # --helpshort lists this command's flags.
  flags.adopt_module_key_flags(export_saved_model)
  flags.adopt_module_key_flags(bert_flags)
  app.run_app(export_saved_model.main)
