r"""Export a trained model as a raw-text SavedModel (TF Serving, TF.js, ...).

    python -m bert_tf.export_saved_model --task=classifier --task_name=mrpc \
      --checkpoint=/tmp/mrpc_output --bert_config_file=bert_config.json \
      --vocab_file=vocab.txt --max_seq_length=128 --export_dir=/tmp/mrpc_sm
    python -m bert_tf.export_saved_model --task=squad \
      --checkpoint=/tmp/squad_output --bert_config_file=bert_config.json \
      --vocab_file=vocab.txt --max_seq_length=384 --doc_stride=128 \
      --export_dir=/tmp/squad_sm
    python -m bert_tf.export_saved_model --task=ner --checkpoint=/tmp/ner \
      --labels_file=/tmp/ner/label_list.txt --max_seq_length=128 \
      --bert_config_file=bert_config.json --vocab_file=vocab.txt \
      --do_lower_case=False --export_dir=/tmp/ner_sm

`--checkpoint` is a run's `--output_dir` (its `best/` if it kept one, else
or with `--use_latest` its latest engine checkpoint), a `ckpt-N` prefix, an
original-format `bert_model.ckpt` prefix or folder, or — as
`from_pretrained` takes them — a HuggingFace model folder or a TF Hub
encoder, converted on the fly; every weight of the task model must be in
it. A run folder's `run_config.json` supplies --task, the
tokenizer, --max_seq_length, the labels and head settings; a flag that
contradicts it is refused (`bert_tf/cli/export_from_run.py`).
`--bert_config_file` and `--vocab_file` default to the files next to the
checkpoint. The serving signature (`serving_default`) takes string tensors
([batch]; multiple choice `endings` [batch, choices]) and tokenizes
in-graph (`bert_tf.tokenizers.tf_text_tokenizer`), so clients send raw text.
The tasks and their options come from the `bert_tf.export` registry; the
model's settings are in `<export_dir>/assets.extra/export_config.json`.
"""

import os
import shutil

from absl import flags

from bert_tf.export import get_exporter
from bert_tf.export import registered_exporters
from bert_tf.io_utils import InputError
from bert_tf.io_utils import make_temp_dir
from bert_tf.io_utils import require_file
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.runtime import app
from bert_tf.runtime import bert_flags
from bert_tf.runtime import flag_checks
from bert_tf.tokenizers import tokenization

FLAGS = flags.FLAGS
# Loaded when the command runs: --help answers before TensorFlow loads.
checkpoint_io = app.lazy_import("bert_tf.checkpoints.checkpoint_io")
conversion = app.lazy_import("bert_tf.modeling.conversion")
pretrained = app.lazy_import("bert_tf.modeling.pretrained")
export_from_run = app.lazy_import("bert_tf.cli.export_from_run")
distribution = app.lazy_import("bert_tf.training.distribution")
# --dtype -> the Keras policy the export's layers are built under.
_POLICIES = {"float32": "float32", "bfloat16": "mixed_bfloat16"}

_DEFINE = {
  "bool": flags.DEFINE_bool,
  "integer": flags.DEFINE_integer,
  "float": flags.DEFINE_float,
  "list": flags.DEFINE_list,
  "string": flags.DEFINE_string,
}


def define_flags():
  """This command's flags, plus every registered task's options."""
  exporters = registered_exporters()
  flags.DEFINE_enum("task", None, sorted(exporters), "What to export.")
  flags.DEFINE_string(
    "checkpoint",
    None,
    "A run's --output_dir (latest checkpoint), a ckpt-N prefix, an "
    "original bert_model.ckpt prefix or folder, a HuggingFace model "
    "folder or a TF Hub encoder.",
  )
  flags.DEFINE_bool(
    "use_latest",
    False,
    "With --checkpoint=<run folder> that has best/ "
    "(--best_metric): export the latest checkpoint instead of best/.",
  )
  flags.DEFINE_string(
    "export_dir", None, "New folder for the SavedModel (must not exist)."
  )
  flags.DEFINE_string(
    "bert_config_file",
    None,
    "The config json file of the model "
    "(default: bert_config.json next to --checkpoint).",
  )
  bert_flags.define_tokenizer_flags()
  flags.DEFINE_enum(
    "dtype",
    "float32",
    sorted(_POLICIES),
    "bfloat16: the SavedModel computes in bfloat16 (mixed precision: "
    "softmax and LayerNorm statistics in float32) and still answers in "
    "float32; weights are read from the float32 checkpoint.",
  )
  flags.DEFINE_integer(
    "max_seq_length",
    None,
    "The maximum total input sequence length "
    "after WordPiece tokenization (default: 384 for squad, else 128).",
  )
  flag_checks.at_least("max_seq_length", 3)
  defined = set()
  for name in sorted(exporters):
    for option in exporters[name].OPTIONS:
      if option.name not in defined:
        defined.add(option.name)
        _DEFINE[option.kind](option.name, option.default, option.help)
        if option.minimum is not None:
          flag_checks.at_least(option.name, option.minimum)
        elif option.kind == "float":
          flag_checks.finite(option.name)


def _beside_checkpoint(path, flag_name, file_name, checkpoint):
  """The flag's value, or `file_name` in the checkpoint's folder."""
  if path:
    require_file(path, flag_name)
    return path
  folder = (
    checkpoint if os.path.isdir(checkpoint) else os.path.dirname(checkpoint)
  )
  candidate = os.path.join(folder, file_name)
  if not os.path.isfile(candidate):
    raise InputError(
      "--%s is required (no %s next to --checkpoint)" % (flag_name, file_name)
    )
  return candidate


def _export_without_checkpoint(exporter_cls):
  """A TF Hub preprocessor: a vocab (or SentencePiece model) and a length,
  no weights."""
  for name in ("checkpoint", "bert_config_file"):
    if FLAGS[name].present:
      raise InputError(
        "--%s is not an option of --task=%s" % (name, FLAGS.task)
      )
  if FLAGS.vocab_file:
    require_file(FLAGS.vocab_file, "vocab_file")
  if os.path.exists(FLAGS.export_dir):
    raise InputError("--export_dir=%s already exists" % FLAGS.export_dir)
  exporter = exporter_cls(
    None,
    FLAGS.vocab_file,
    FLAGS.do_lower_case,
    FLAGS.max_seq_length or exporter_cls.DEFAULT_MAX_SEQ_LENGTH,
    {o.name: FLAGS[o.name].value for o in exporter_cls.OPTIONS},
  )
  exporter.save(FLAGS.export_dir)
  print("wrote %s SavedModel to %s" % (FLAGS.task, FLAGS.export_dir))


def main(argv):
  del argv
  if not FLAGS.export_dir:
    raise InputError("--export_dir is required")
  # A run folder brings its own task, tokenizer, labels and best/.
  settings, checkpoint = (
    export_from_run.apply_run_settings(FLAGS)
    if (FLAGS.checkpoint)
    else (None, None)
  )
  if not FLAGS.task:
    raise InputError("--task is required")
  exporter_cls = get_exporter(FLAGS.task)
  own = {o.name for o in exporter_cls.OPTIONS}
  for cls in registered_exporters().values():
    for option in cls.OPTIONS:
      if option.name not in own and FLAGS[option.name].present:
        raise InputError(
          "--%s is not an option of --task=%s" % (option.name, FLAGS.task)
        )
  if not exporter_cls.NEEDS_CHECKPOINT:
    return _export_without_checkpoint(exporter_cls)
  if not FLAGS.checkpoint:
    raise InputError("--checkpoint is required")
  if os.path.exists(FLAGS.export_dir):
    raise InputError("--export_dir=%s already exists" % FLAGS.export_dir)
  kind = os.path.isdir(checkpoint) and checkpoint_io.folder_format(checkpoint)
  if not kind:
    return _export(exporter_cls, checkpoint, checkpoint, settings)
  # An HF folder or a TF Hub encoder, as `from_pretrained` takes them:
  # converted to the original layout beside the export, then exported.
  _check_hf_case(checkpoint, kind)
  tmp_dir = make_temp_dir(
    os.path.dirname(os.path.abspath(FLAGS.export_dir)), ".convert-"
  )
  try:
    converted = conversion.convert(checkpoint, kind, tmp_dir)
    _export(exporter_cls, converted, os.path.dirname(converted), settings)
  finally:
    shutil.rmtree(tmp_dir, ignore_errors=True)


def _check_hf_case(folder, kind):
  """--do_lower_case from an HF folder's tokenizer_config.json; a flag
  that contradicts it is refused."""
  lower = pretrained.hf_lower_case(folder) if kind == "hf" else None
  if lower is None:
    return
  if not FLAGS["do_lower_case"].present:
    FLAGS.do_lower_case = lower
  elif FLAGS.do_lower_case != lower:
    raise InputError(
      "--do_lower_case=%s contradicts --checkpoint=%s (its "
      "tokenizer_config.json: do_lower_case=%s)"
      % (FLAGS.do_lower_case, folder, lower)
    )


def _export(exporter_cls, checkpoint, beside, settings):
  """Exports `checkpoint` (a TF checkpoint; its bert_config.json and
  vocab.txt by default from `beside`)."""
  checkpoint_io.resolve_checkpoint(checkpoint)  # fails first
  recorded = "--checkpoint=%s (run_config.json)" % FLAGS.checkpoint
  if settings and not FLAGS.bert_config_file:
    config = BertConfig.from_dict(settings.bert_config, recorded)
  else:
    config = BertConfig.from_json_file(
      _beside_checkpoint(
        FLAGS.bert_config_file, "bert_config_file", "bert_config.json", beside
      )
    )
    if settings and config != BertConfig.from_dict(
      settings.bert_config, recorded
    ):
      raise InputError(
        "--bert_config_file=%s contradicts the run in "
        "--checkpoint=%s (its run_config.json)"
        % (FLAGS.bert_config_file, FLAGS.checkpoint)
      )
  options = {o.name: FLAGS[o.name].value for o in exporter_cls.OPTIONS}
  # A SentencePiece model replaces the vocab.txt beside the checkpoint.
  vocab_file = (
    None
    if options.get("spm_model_file") and not FLAGS.vocab_file
    else _beside_checkpoint(FLAGS.vocab_file, "vocab_file", "vocab.txt", beside)
  )
  try:
    tokenization.validate_case_matches_checkpoint(
      FLAGS.do_lower_case, checkpoint
    )
  except ValueError as e:
    raise InputError(str(e).replace("\n", " ")) from e
  try:
    with distribution.policy_scope(_POLICIES[FLAGS.dtype]):
      exporter = exporter_cls(
        config,
        vocab_file,
        FLAGS.do_lower_case,
        FLAGS.max_seq_length or exporter_cls.DEFAULT_MAX_SEQ_LENGTH,
        options,
      )
  except InputError as e:
    if not settings:
      raise
    # The head settings came from the record: it is the culprit.
    raise InputError(
      "%s, task %s: %s (does the record belong to this run?)"
      % (recorded, settings.task, e)
    ) from e
  exporter.restore(checkpoint)
  exporter.save(FLAGS.export_dir)
  print("wrote %s SavedModel to %s" % (FLAGS.task, FLAGS.export_dir))


def run():
  """Console-script entry point."""
  app.run_app(main, define_flags=define_flags)


if __name__ == "__main__":
  run()
