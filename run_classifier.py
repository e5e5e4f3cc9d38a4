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
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# pylint: disable=g-import-not-at-top,wrong-import-position
from absl import app
from absl import flags
from absl import logging
import tensorflow as tf

from bert_tf.cli import bert_flags
from bert_tf.tasks import classifier_results
from bert_tf.cli import engine_flags
from bert_tf.training import input_pipeline
from bert_tf.cli import script_runner
from bert_tf.tokenizers import tokenization
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.tasks.base import write_eval_results
from bert_tf.tasks.classification import ClassificationTask
from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import InputError
from bert_tf.io_utils import require_file
from bert_tf.io_utils import run_cli
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
script_runner.define_finetuning_flags(max_seq_length=128)
classifier_flags.define_task_flags()
# List the shared flags in --helpshort too.
for _module in (bert_flags, script_runner, engine_flags, classifier_flags):
  flags.adopt_module_key_flags(_module)

_REQUIRED = ("data_dir", "task_name", "vocab_file", "bert_config_file",
             "output_dir")
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
  if FLAGS.glue_submission_file and not FLAGS.do_predict:
    raise InputError("--glue_submission_file needs --do_predict")
  require_file(FLAGS.vocab_file, "vocab_file")
  require_file(FLAGS.bert_config_file, "bert_config_file")


class _Task:
  """The examples, labels and TFRecords of this run."""

  def __init__(self, processor, tokenizer):
    self.processor = processor
    self.tokenizer = tokenizer
    self.label_list = processor.get_labels()
    self.specs = input_pipeline.classifier_features(
        FLAGS.max_seq_length, processor.is_regression)
    # Every file is read now, so a bad row fails before any training.
    self.examples = {split: processor.get_examples(split)
                     for split, (do_flag, _, _) in _SPLITS.items()
                     if FLAGS[do_flag].value}

  def write_records(self, split):
    """Featurizes `split` into output_dir; returns (path, batch size)."""
    _, name, batch_flag = _SPLITS[split]
    path = os.path.join(FLAGS.output_dir, name)
    batch_size = FLAGS[batch_flag].value
    # The original pads eval/predict sets to whole batches only on TPU.
    pad = batch_size if FLAGS.use_tpu and split != "train" else None
    count = write_examples_to_tfrecord(
        self.examples[split], self.label_list, FLAGS.max_seq_length,
        self.tokenizer, path, pad_to_multiple_of=pad)
    logging.info("***** %s: %d examples (%d + %d padding), batch size %d",
                 split, count, len(self.examples[split]),
                 count - len(self.examples[split]), batch_size)
    return path, batch_size

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
  task = _Task(processor, tokenization.FullTokenizer(
      FLAGS.vocab_file, FLAGS.do_lower_case))
  tf.io.gfile.makedirs(FLAGS.output_dir)
  is_regression = processor.is_regression
  num_labels = 1 if is_regression else len(task.label_list)

  num_train_steps, num_warmup_steps = 0, 0
  if FLAGS.do_train:
    num_train_steps, num_warmup_steps = script_runner.train_steps(
        len(task.examples["train"]), FLAGS.train_batch_size,
        FLAGS.num_train_epochs, FLAGS.warmup_proportion)
  trainer = script_runner.build_trainer(
      FLAGS, ClassificationTask(config, num_labels, FLAGS.max_seq_length),
      num_train_steps, num_warmup_steps)

  if FLAGS.do_train:
    path, _ = task.write_records("train")
    logging.info("***** Running training: %d steps, %d warmup",
                 num_train_steps, num_warmup_steps)
    trainer.train(input_pipeline.training_dataset_fn(
        [path], task.specs, FLAGS.train_batch_size), num_train_steps)

  if FLAGS.do_eval:
    rows, batch_size = task.predict(trainer, "dev")
    write_eval_results(
        os.path.join(FLAGS.output_dir, "eval_results.txt"),
        classifier_results.eval_results(processor.name, rows, batch_size,
                                        is_regression, trainer.global_step))

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
  app.run(run_cli(main))


if __name__ == "__main__":
  run()
