r"""BERT fine-tuning and prediction for SQuAD 1.1 and 2.0.

The original run_squad.py on the Keras 3 engine: same flags, defaults and
output files, and original checkpoints load as they are.

    python run_squad.py --vocab_file=$BERT_DIR/vocab.txt \
      --bert_config_file=$BERT_DIR/bert_config.json \
      --init_checkpoint=$BERT_DIR/bert_model.ckpt --do_train=True \
      --train_file=$SQUAD_DIR/train-v1.1.json --do_predict=True \
      --predict_file=$SQUAD_DIR/dev-v1.1.json --train_batch_size=12 \
      --learning_rate=3e-5 --num_train_epochs=2.0 --max_seq_length=384 \
      --doc_stride=128 --output_dir=/tmp/squad_base/

--do_train writes train.tf_record (examples pre-shuffled with
random.Random(12345)) and trains int(questions / train_batch_size *
num_train_epochs) steps; re-running the same command resumes from the latest
checkpoint in --output_dir. --do_predict writes eval.tf_record (+ its
.features.jsonl sidecar), raw_results.jsonl (the logits, see
data_prep/squad/predictions.py to re-score them), predictions.json,
nbest_predictions.json, null_odds.json (v2) and, when --predict_file has
answers, eval_results.json with the official metrics (v2: also best_exact /
best_f1 and their thresholds, computed from null_odds). With a multi-worker
TF_CONFIG every worker featurizes and predicts, and only the chief writes the
prediction files. --verbose_logging is accepted for compatibility; questions
skipped for an answer not found in the context are counted in one warning.

New: --spm_model_file (a SentencePiece model instead of --vocab_file);
--eval_every_steps / --eval_every_epochs score --predict_file during
training with the same post-processing and official evaluation as
--do_predict (eval_history.jsonl, TensorBoard in output_dir/eval/), with
--best_metric (e.g. f1), --early_stopping_patience and
--predict_checkpoint=best (bert_tf/cli/eval_flags.py).
"""

import json
import os
import random

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# pylint: disable=g-import-not-at-top,wrong-import-position
from absl import flags
from absl import logging
import tensorflow as tf
import tqdm

from bert_tf.cli import bert_flags
from bert_tf.training import distribution
from bert_tf.cli import engine_flags
from bert_tf.cli import eval_flags
from bert_tf.training import input_pipeline
from bert_tf.cli import script_runner
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import output_set
from bert_tf.io_utils import InputError
from bert_tf.io_utils import make_output_dir
from bert_tf.io_utils import require_file
from bert_tf.tokenizers.loading import load_tokenizer
from bert_tf.tasks.squad import SquadTask
from bert_tf.cli import app
from data_prep.squad import evaluation as squad_evaluation
from data_prep.squad import flags as squad_flags
from data_prep.squad import postprocess as squad_postprocess
from data_prep.squad.example import load_squad_json
from data_prep.squad.example import read_squad_examples
from data_prep.squad.features import check_feature_settings
from data_prep.squad.records import read_features_sidecar
from data_prep.squad.writer import write_squad_features

FLAGS = flags.FLAGS

flags.DEFINE_string("train_file", None,
                    "SQuAD json for training. E.g., train-v1.1.json")
flags.DEFINE_string(
    "predict_file", None,
    "SQuAD json for predictions. E.g., dev-v1.1.json or test-v1.1.json")
flags.DEFINE_string(
    "train_records", None,
    "With --do_train: train on these TFRecords (comma-separated globs, e.g. "
    "the shards of `python -m data_prep.squad --is_training --runner=...`: "
    "'out/train.tf_record-*') instead of featurizing --train_file. The "
    "steps then come from the number of features, not of questions.")
flags.DEFINE_bool("do_predict", False, "Whether to run eval on the dev set.")
flags.DEFINE_integer("predict_batch_size", 8,
                     "Total batch size for predictions.")
flags.DEFINE_bool(
    "verbose_logging", False,
    "If true, all of the warnings related to data processing will be "
    "printed. A number of warnings are expected for a normal SQuAD "
    "evaluation.")
script_runner.define_finetuning_flags(max_seq_length=384)
bert_flags.define_spm_model_file()
squad_flags.define_feature_flags()
squad_flags.define_prediction_flags()
# List the shared flags in --helpshort too.
for _module in (bert_flags, script_runner, engine_flags, eval_flags,
                squad_flags):
  flags.adopt_module_key_flags(_module)

_REQUIRED = ("bert_config_file", "output_dir")
# The keys of eval_results.json (evaluation.evaluate), by v2, for
# --best_metric.
_METRIC_NAMES = {
    False: ("exact_match", "f1"),
    True: ("exact", "f1", "total", "HasAns_exact", "HasAns_f1",
           "HasAns_total", "NoAns_exact", "NoAns_f1", "NoAns_total",
           "best_exact", "best_exact_thresh", "best_f1", "best_f1_thresh"),
}


def _periodic_eval():
  return bool(FLAGS.eval_every_steps or FLAGS.eval_every_epochs)


def _check_flags():
  """The original `validate_flags_or_throw`, plus files and sizes; -> config."""
  for name in _REQUIRED:
    if not FLAGS[name].value:
      raise InputError("--%s is required" % name)
  require_file(FLAGS.bert_config_file, "bert_config_file")
  config = BertConfig.from_json_file(FLAGS.bert_config_file)
  script_runner.check_case(FLAGS.do_lower_case, FLAGS.init_checkpoint)
  script_runner.check_do_flags(FLAGS, "do_train", "do_predict")
  eval_flags.check_eval_flags(FLAGS, training=FLAGS.do_train)
  for do_flag, file_flag in (("do_train", "train_file"),
                             ("do_predict", "predict_file")):
    if FLAGS[do_flag].value and not (file_flag == "train_file" and
                                     FLAGS.train_records):
      if not FLAGS[file_flag].value:
        raise InputError("If `%s` is True, then `%s` must be specified." %
                         (do_flag, file_flag))
      require_file(FLAGS[file_flag].value, file_flag)
  if _periodic_eval():
    if not FLAGS.predict_file:
      raise InputError("evaluation during training needs --predict_file "
                       "(a dev set with answers)")
    require_file(FLAGS.predict_file, "predict_file")
  config.check_max_seq_length(FLAGS.max_seq_length)
  check_feature_settings(FLAGS.max_seq_length, FLAGS.doc_stride,
                         FLAGS.max_query_length)
  if not FLAGS.spm_model_file:
    require_file(FLAGS.vocab_file, "vocab_file")
  config.check_vocab(load_tokenizer(FLAGS.vocab_file, FLAGS.do_lower_case,
                                    FLAGS.spm_model_file).vocab,
                     FLAGS.spm_model_file or FLAGS.vocab_file)
  config.check_segments(True, "SQuAD (question + context)")
  return config


def _write_records(examples, name, is_training, features_file=None):
  """Featurizes `examples` into output_dir/name; returns (path, features)."""
  path = os.path.join(FLAGS.output_dir, name)
  counts = write_squad_features(
      examples, FLAGS.vocab_file, FLAGS.do_lower_case, path, features_file,
      FLAGS.max_seq_length, FLAGS.doc_stride, FLAGS.max_query_length,
      is_training, progress=True, spm_model_file=FLAGS.spm_model_file)
  logging.info("  Num orig examples = %d", counts.examples)
  logging.info("  Num split examples = %d", counts.features)
  return path, counts.features


def _train(trainer, examples, num_train_steps, eval_hook):
  """Trains on `examples`, or on the record files --train_records gave."""
  logging.info("***** Running training *****")
  if FLAGS.train_records:
    paths = examples
  else:
    paths = [_write_records(examples, "train.tf_record", True)[0]]
  logging.info("  Batch size = %d", FLAGS.train_batch_size)
  logging.info("  Num steps = %d", num_train_steps)
  specs = input_pipeline.squad_features(FLAGS.max_seq_length, True)
  trainer.train(input_pipeline.training_dataset_fn(
      paths, specs, FLAGS.train_batch_size), num_train_steps,
                eval_hook=eval_hook)


def _raw_results(trainer, path, num_features):
  """The model's logits for every feature of `path`, in file order."""
  dataset = input_pipeline.eval_dataset(
      [path], input_pipeline.squad_features(FLAGS.max_seq_length, False),
      FLAGS.predict_batch_size)
  rows = trainer.predict(dataset, FLAGS.predict_batch_size,
                         feature_keys=("unique_ids",))
  # tolist(): Python floats holding the exact float32 values, so re-scoring
  # raw_results.jsonl later gives the same predictions.
  return [squad_postprocess.RawResult(int(row["unique_ids"]),
                                      row["start_logits"].tolist(),
                                      row["end_logits"].tolist())
          for row in tqdm.tqdm(rows, total=num_features, unit="feature",
                               disable=None if FLAGS.progress else True)]


class _DevSet:
  """--predict_file: its features (written once), predictions and metrics,
  shared by --do_predict and the evaluations during training."""

  def __init__(self, examples):
    self.examples = examples
    self.v2 = FLAGS.version_2_with_negative
    self.dataset = load_squad_json(FLAGS.predict_file)
    self.is_scorable = squad_evaluation.is_scorable(self.dataset, self.v2)
    self._records = None

  def _features(self):
    if self._records is None:
      sidecar = os.path.join(FLAGS.output_dir,
                             "eval.tf_record.features.jsonl")
      path, num_features = _write_records(self.examples, "eval.tf_record",
                                          False, sidecar)
      logging.info("  Batch size = %d", FLAGS.predict_batch_size)
      self._records = path, num_features, read_features_sidecar(sidecar)[1]
    return self._records

  def predict(self, trainer):
    """(raw results, Predictions) of the trainer's weights."""
    path, num_features, features = self._features()
    results = _raw_results(trainer, path, num_features)
    return results, squad_postprocess.compute_predictions(
        self.examples, features, results, FLAGS.n_best_size,
        FLAGS.max_answer_length, FLAGS.do_lower_case, self.v2,
        FLAGS.null_score_diff_threshold, bool(FLAGS.spm_model_file))

  def metrics(self, predictions):
    """The official evaluation (eval_results.json)."""
    return squad_evaluation.evaluate(
        self.dataset, predictions.predictions,
        predictions.null_odds if self.v2 else None, self.v2)

  def eval_results(self, trainer):
    """The official metrics of the trainer's weights (the eval_fn)."""
    return self.metrics(self.predict(trainer)[1])


# Recorded with raw_results.jsonl (data_prep.squad_predictions checks them).
_FEATURE_SETTINGS = ("max_seq_length", "doc_stride", "max_query_length")


def _predict(trainer, dev):
  logging.info("***** Running predictions *****")
  results, predictions = dev.predict(trainer)
  if not distribution.is_chief(trainer.strategy):
    return  # Every worker predicts; only the chief writes the outputs.
  with output_set(FLAGS.output_dir, PREDICTION_SET):
    _write_predictions(dev, results, predictions)


# One run's prediction outputs: published together (io_utils.output_set).
PREDICTION_SET = ("raw_results.jsonl", "raw_results.jsonl.settings.json",
                  "predictions.json", "nbest_predictions.json",
                  "null_odds.json", "eval_results.json")


def _write_predictions(dev, results, predictions):
  squad_postprocess.write_raw_results(
      os.path.join(FLAGS.output_dir, "raw_results.jsonl"), results,
      {name: FLAGS[name].value for name in _FEATURE_SETTINGS})
  squad_postprocess.write_prediction_files(predictions, FLAGS.output_dir)
  logging.info("%d predictions written to %s", len(predictions.predictions),
               FLAGS.output_dir)
  if not dev.is_scorable:
    logging.info("%s has no answers: no eval_results.json",
                 FLAGS.predict_file)
    return
  metrics = dev.metrics(predictions)
  with atomic_output(os.path.join(FLAGS.output_dir,
                                  "eval_results.json")) as f:
    f.write(json.dumps(metrics, indent=2) + "\n")
  print(json.dumps(metrics))


def main(_):
  config = _check_flags()
  v2 = FLAGS.version_2_with_negative
  # Both files are read now, so a bad question fails before any training.
  train_examples = dev = None
  num_train_steps, num_warmup_steps, steps_per_epoch = 0, 0, None
  if FLAGS.do_train and FLAGS.train_records:
    train_examples, num_train = input_pipeline.train_records(
        FLAGS.train_records,
        input_pipeline.squad_features(FLAGS.max_seq_length, True))
  elif FLAGS.do_train:
    train_examples = read_squad_examples(FLAGS.train_file, True, v2)
    random.Random(12345).shuffle(train_examples)
    num_train = len(train_examples)
  if FLAGS.do_train:
    steps_per_epoch = num_train / FLAGS.train_batch_size
    num_train_steps, num_warmup_steps = script_runner.train_steps(
        num_train, FLAGS.train_batch_size, FLAGS.num_train_epochs,
        FLAGS.warmup_proportion)
  if FLAGS.do_predict or _periodic_eval():
    dev = _DevSet(read_squad_examples(FLAGS.predict_file, False, v2))
    if _periodic_eval() and not dev.is_scorable:
      raise InputError("--predict_file=%s has no answers to evaluate during "
                       "training" % FLAGS.predict_file)
  hook = eval_flags.eval_hook(
      FLAGS, dev.eval_results if dev else None, FLAGS.bert_config_file,
      steps_per_epoch, _METRIC_NAMES[v2])
  make_output_dir(FLAGS.output_dir)
  trainer = script_runner.build_trainer(
      FLAGS, SquadTask(config, FLAGS.max_seq_length), num_train_steps,
      num_warmup_steps)
  if FLAGS.do_train:
    _train(trainer, train_examples, num_train_steps, hook)
  if FLAGS.do_predict:
    eval_flags.restore_predict_checkpoint(FLAGS, trainer)
    _predict(trainer, dev)


def run():
  """Console-script entry point (flags are defined at import)."""
  app.run_app(main)


if __name__ == "__main__":
  run()
