r"""BERT fine-tuning for sentence(-pair) classification and regression.

The original run_classifier.py on the Keras 3 engine: same flags, defaults
and output files, for every GLUE task plus XNLI and your own TSV files.

    python run_classifier.py --task_name=MRPC --do_train --do_eval \
      --data_dir=$GLUE_DIR/MRPC --vocab_file=$BERT_DIR/vocab.txt \
      --bert_config_file=$BERT_DIR/bert_config.json \
      --init_checkpoint=$BERT_DIR/bert_model.ckpt --max_seq_length=128 \
      --train_batch_size=32 --learning_rate=2e-5 --num_train_epochs=3.0 \
      --output_dir=/tmp/mrpc_output/

Tasks: cola, sst-2, mrpc, sts-b (regression), qqp, mnli (matched dev/test),
mnli-mm (mismatched), qnli, rte, wnli, xnli, and tsv (see
data_prep/classifier/flags.py). Writes train/eval/predict.tf_record,
checkpoints, eval_results.txt (eval_accuracy, eval_loss, global_step, loss
and the task's GLUE metrics) and test_results.tsv (per test example, the
class probabilities in label order; regression: the score), optionally a
GLUE submission file (--glue_submission_file).

New: --spm_model_file (a SentencePiece model instead of --vocab_file);
--task_name=tsv --multi_label (label sets: sigmoid outputs, F1 metrics,
per-label probabilities in test_results.tsv); --eval_every_steps /
--eval_every_epochs (dev evaluation during training: eval_history.jsonl,
TensorBoard in output_dir/eval/), --best_metric, --early_stopping_patience
and --predict_checkpoint=best (bert_tf/cli/eval_flags.py).
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# pylint: disable=g-import-not-at-top,wrong-import-position
from absl import flags
from absl import logging
import tensorflow as tf

from bert_tf.cli import bert_flags
from bert_tf.tasks import classifier_results
from bert_tf.cli import engine_flags
from bert_tf.cli import eval_flags
from bert_tf.training import input_pipeline
from bert_tf.cli import script_runner
from bert_tf.tokenizers.loading import load_tokenizer
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.tasks.base import write_eval_results
from bert_tf.tasks.classification import ClassificationTask
from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import InputError
from bert_tf.io_utils import make_output_dir
from bert_tf.io_utils import require_file
from bert_tf.cli import app
from data_prep.classifier import flags as classifier_flags
from data_prep.classifier.features import write_examples_to_tfrecord

FLAGS = flags.FLAGS

flags.DEFINE_string(
    "data_dir", None,
    "The input data dir. Should contain the .tsv files (or other data files) "
    "for the task.")
flags.DEFINE_string("task_name", None, "The name of the task to train.")
flags.DEFINE_bool("do_eval", False, "Whether to run eval on the dev set.")
flags.DEFINE_bool(
    "do_predict", False,
    "Whether to run the model in inference mode on the test set.")
flags.DEFINE_integer("eval_batch_size", 8, "Total batch size for eval.")
flags.DEFINE_integer("predict_batch_size", 8, "Total batch size for predict.")
flags.DEFINE_string(
    "glue_submission_file", None,
    "With --do_predict, also write the test predictions here as a GLUE "
    "submission TSV (header `index<TAB>prediction`, label names; "
    "regression: the score), e.g. $OUTPUT_DIR/MRPC.tsv.")
flags.DEFINE_string(
    "train_records", None,
    "With --do_train: train on these TFRecords (comma-separated globs, e.g. "
    "the shards of `python -m data_prep.classifier --runner=...`: "
    "'out/train.tf_record-*') instead of featurizing the train split.")
script_runner.define_finetuning_flags(max_seq_length=128)
bert_flags.define_spm_model_file()
classifier_flags.define_task_flags()
# List the shared flags in --helpshort too.
for _module in (bert_flags, script_runner, engine_flags, eval_flags,
                classifier_flags):
  flags.adopt_module_key_flags(_module)

_REQUIRED = ("data_dir", "task_name", "bert_config_file", "output_dir")
# split -> (do_* flag, TFRecord name, batch-size flag)
_SPLITS = {
    "train": ("do_train", "train.tf_record", "train_batch_size"),
    "dev": ("do_eval", "eval.tf_record", "eval_batch_size"),
    "test": ("do_predict", "predict.tf_record", "predict_batch_size"),
}


def _check_flags():
  for name in _REQUIRED:
    if not FLAGS[name].value:
      raise InputError("--%s is required" % name)
  script_runner.check_case(FLAGS.do_lower_case, FLAGS.init_checkpoint)
  script_runner.check_do_flags(FLAGS, "do_train", "do_eval", "do_predict")
  eval_flags.check_eval_flags(FLAGS, training=FLAGS.do_train)
  if FLAGS.glue_submission_file and not FLAGS.do_predict:
    raise InputError("--glue_submission_file needs --do_predict")
  if FLAGS.glue_submission_file and FLAGS.multi_label:
    raise InputError("--glue_submission_file: not for --multi_label")
  require_file(FLAGS.bert_config_file, "bert_config_file")


def _periodic_eval():
  return bool(FLAGS.eval_every_steps or FLAGS.eval_every_epochs)


class _Task:
  """The examples, labels and TFRecords of this run."""

  def __init__(self, processor, tokenizer, classification):
    self.processor = processor
    self.tokenizer = tokenizer
    self.label_list = processor.get_labels()
    self.specs = classification.feature_spec(False)
    # Every file is read now, so a bad row fails before any training.
    self.examples = {split: processor.get_examples(split)
                     for split, (do_flag, _, _) in _SPLITS.items()
                     if (FLAGS[do_flag].value and not (
                         split == "train" and FLAGS.train_records)) or (
                             split == "dev" and _periodic_eval())}
    self._records = {}

  def write_records(self, split):
    """Featurizes `split` into output_dir once; returns (path, batch size)."""
    _, name, batch_flag = _SPLITS[split]
    path = os.path.join(FLAGS.output_dir, name)
    batch_size = FLAGS[batch_flag].value
    if split not in self._records:
      # The original pads eval/predict sets to whole batches only on TPU.
      pad = batch_size if FLAGS.use_tpu and split != "train" else None
      count = write_examples_to_tfrecord(
          self.examples[split], self.label_list, FLAGS.max_seq_length,
          self.tokenizer, path, pad_to_multiple_of=pad,
          multi_label=self.processor.is_multi_label)
      logging.info("***** %s: %d examples (%d + %d padding), batch size %d",
                   split, count, len(self.examples[split]),
                   count - len(self.examples[split]), batch_size)
      self._records[split] = path, batch_size
    return self._records[split]

  def eval_results(self, trainer):
    """The metrics of eval_results.txt for the trainer's weights."""
    rows, batch_size = self.predict(trainer, "dev")
    return classifier_results.eval_results(
        self.processor.name, rows, batch_size, self.processor.is_regression,
        trainer.global_step, self._multi_labels())

  def metric_names(self):
    return classifier_results.metric_names(
        self.processor.name, self.processor.is_regression,
        self._multi_labels())

  def _multi_labels(self):
    return self.label_list if self.processor.is_multi_label else None

  def predict(self, trainer, split):
    """Model outputs + labels for every record of `split`, in file order."""
    path, batch_size = self.write_records(split)
    dataset = input_pipeline.eval_dataset([path], self.specs, batch_size)
    rows = list(trainer.predict(
        dataset, batch_size, feature_keys=("label_ids", "is_real_example")))
    return rows, batch_size


def _write_lines(path, lines):
  with atomic_output(path) as writer:
    writer.writelines(lines)
  logging.info("wrote %s", path)


def main(_):
  _check_flags()
  config = BertConfig.from_json_file(FLAGS.bert_config_file)
  config.check_max_seq_length(FLAGS.max_seq_length)
  processor = classifier_flags.processor_from_flags(FLAGS)
  tokenizer = load_tokenizer(FLAGS.vocab_file, FLAGS.do_lower_case,
                             FLAGS.spm_model_file)
  config.check_vocab(tokenizer.vocab, FLAGS.spm_model_file or FLAGS.vocab_file)
  is_regression = processor.is_regression
  num_labels = 1 if is_regression else len(processor.get_labels())
  classification = ClassificationTask(config, num_labels,
                                      FLAGS.max_seq_length,
                                      processor.is_multi_label)
  task = _Task(processor, tokenizer, classification)
  config.check_segments(any(e.text_b for split in task.examples.values()
                            for e in split), "--task_name=%s" % processor.name)
  num_train_steps, num_warmup_steps, steps_per_epoch = 0, 0, None
  if FLAGS.do_train:
    if FLAGS.train_records:
      train_files, num_train = input_pipeline.train_records(
          FLAGS.train_records, task.specs)
    else:
      num_train = len(task.examples["train"])
    steps_per_epoch = num_train / FLAGS.train_batch_size
    num_train_steps, num_warmup_steps = script_runner.train_steps(
        num_train, FLAGS.train_batch_size, FLAGS.num_train_epochs,
        FLAGS.warmup_proportion)
  # Before any output, so that a bad --best_metric leaves nothing behind.
  hook = eval_flags.eval_hook(FLAGS, task.eval_results,
                              FLAGS.bert_config_file, steps_per_epoch,
                              task.metric_names())
  make_output_dir(FLAGS.output_dir)
  trainer = script_runner.build_trainer(FLAGS, classification,
                                        num_train_steps, num_warmup_steps)

  if FLAGS.do_train:
    if not FLAGS.train_records:
      train_files = [task.write_records("train")[0]]
    logging.info("***** Running training: %d steps, %d warmup",
                 num_train_steps, num_warmup_steps)
    trainer.train(input_pipeline.training_dataset_fn(
        train_files, task.specs, FLAGS.train_batch_size), num_train_steps,
                  eval_hook=hook)

  if FLAGS.do_eval or FLAGS.do_predict:
    eval_flags.restore_predict_checkpoint(FLAGS, trainer)

  if FLAGS.do_eval:
    write_eval_results(os.path.join(FLAGS.output_dir, "eval_results.txt"),
                       task.eval_results(trainer))

  if FLAGS.do_predict:
    rows, _ = task.predict(trainer, "test")
    _write_lines(os.path.join(FLAGS.output_dir, "test_results.tsv"),
                 classifier_results.prediction_lines(rows, is_regression))
    if FLAGS.glue_submission_file:
      _write_lines(FLAGS.glue_submission_file,
                   classifier_results.glue_submission_lines(
                       rows, task.label_list))


def run():
  """Console-script entry point (flags are defined at import)."""
  app.run_app(main)


if __name__ == "__main__":
  run()
