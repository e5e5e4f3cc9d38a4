r"""BERT fine-tuning for multiple choice: SWAG and your own JSON-lines data.

The BERT paper's SWAG setup on the Keras 3 engine, with run_classifier.py's
flags and output files. Per choice the input is
`[CLS] sent1 [SEP] sent2 + " " + ending_i [SEP]`; one learned vector scores
each choice's pooled output and a softmax over the choices is trained with
cross-entropy. Defaults are the paper's SWAG recipe: 3 epochs, lr 2e-5,
batch 16, max_seq_length 128.

    python run_multiple_choice.py --do_train --do_eval \
      --data_dir=$SWAG_DIR --vocab_file=$BERT_DIR/vocab.txt \
      --bert_config_file=$BERT_DIR/bert_config.json \
      --init_checkpoint=$BERT_DIR/bert_model.ckpt --output_dir=/tmp/swag/

--data_dir holds SWAG's train.csv / val.csv / test.csv as published
(rowanz/swagaf), or train.jsonl / val.jsonl (or dev.jsonl) / test.jsonl in
the generic format (data_prep/multiple_choice/examples.py). Writes
train/eval/predict.tf_record, checkpoints, eval_results.txt (eval_accuracy,
eval_loss, global_step, loss) and test_results.tsv (per test example, the
choices' probabilities in ending order).

As run_classifier.py: --spm_model_file (SentencePiece instead of
--vocab_file); --eval_every_steps / --eval_every_epochs (dev evaluation
during training: eval_history.jsonl, TensorBoard in output_dir/eval/),
--best_metric (e.g. eval_accuracy; output_dir/best/),
--early_stopping_patience and --predict_checkpoint=best; --train_records
(train on records of `python -m data_prep.multiple_choice`, e.g. Beam
shards).
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# pylint: disable=g-import-not-at-top,wrong-import-position
from absl import flags
from absl import logging
import tensorflow as tf

from bert_tf.cli import bert_flags
from bert_tf.cli import engine_flags
from bert_tf.cli import eval_flags
from bert_tf.cli import script_runner
from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import InputError
from bert_tf.io_utils import make_output_dir
from bert_tf.io_utils import require_file
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.tasks import classifier_results
from bert_tf.tasks.base import write_eval_results
from bert_tf.tasks.multiple_choice import MultipleChoiceTask
from bert_tf.tokenizers.loading import load_tokenizer
from bert_tf.training import input_pipeline
from bert_tf.cli import app
from data_prep.multiple_choice import examples as mc_examples
from data_prep.multiple_choice.features import write_records

FLAGS = flags.FLAGS

flags.DEFINE_string(
    "data_dir", None,
    "The input data dir: SWAG's train.csv, val.csv, test.csv, or "
    "train.jsonl, val.jsonl (or dev.jsonl), test.jsonl.")
flags.DEFINE_bool("do_eval", False, "Whether to run eval on the dev set.")
flags.DEFINE_bool(
    "do_predict", False,
    "Whether to run the model in inference mode on the test set.")
flags.DEFINE_integer("eval_batch_size", 8, "Total batch size for eval.")
flags.DEFINE_integer("predict_batch_size", 8, "Total batch size for predict.")
flags.DEFINE_string(
    "train_records", None,
    "With --do_train: train on these TFRecords (comma-separated globs, e.g. "
    "the shards of `python -m data_prep.multiple_choice --runner=...`: "
    "'out/train.tf_record-*') instead of featurizing train.csv; the number "
    "of choices is read from them.")
script_runner.define_finetuning_flags(max_seq_length=128)
bert_flags.define_spm_model_file()
# The paper's SWAG recipe (run_classifier's are batch 32, lr 5e-5).
FLAGS.set_default("train_batch_size", 16)
FLAGS.set_default("learning_rate", 2e-5)
for _module in (bert_flags, script_runner, engine_flags):
  flags.adopt_module_key_flags(_module)

_REQUIRED = ("data_dir", "bert_config_file", "output_dir")
# split -> (do_* flag, TFRecord name, batch-size flag)
_SPLITS = {
    "train": ("do_train", "train.tf_record", "train_batch_size"),
    "dev": ("do_eval", "eval.tf_record", "eval_batch_size"),
    "test": ("do_predict", "predict.tf_record", "predict_batch_size"),
}


def _check_flags():
  for name in _REQUIRED:
    if not FLAGS[name].value and not (name == "data_dir" and
                                      _only_train_records()):
      raise InputError("--%s is required" % name)
  script_runner.check_case(FLAGS.do_lower_case, FLAGS.init_checkpoint)
  script_runner.check_do_flags(FLAGS, "do_train", "do_eval", "do_predict")
  eval_flags.check_eval_flags(FLAGS, training=FLAGS.do_train)
  if not FLAGS.spm_model_file:
    require_file(FLAGS.vocab_file, "vocab_file")
  require_file(FLAGS.bert_config_file, "bert_config_file")


def _periodic_eval():
  return bool(FLAGS.eval_every_steps or FLAGS.eval_every_epochs)


def _only_train_records():
  """Whether --train_records is all this run reads (no --data_dir needed)."""
  return bool(FLAGS.train_records and not (
      FLAGS.do_eval or FLAGS.do_predict or _periodic_eval()))


def _read_splits():
  """({split: examples} for the requested splits, their choice count or
  None when only --train_records is read)."""
  examples, first = {}, None
  for split, (do_flag, _, _) in _SPLITS.items():
    if not (FLAGS[do_flag].value or (split == "dev" and _periodic_eval())):
      continue
    if split == "train" and FLAGS.train_records:
      continue
    path = mc_examples.split_file(FLAGS.data_dir, split)
    examples[split] = mc_examples.read_examples(path, split)
    count = len(examples[split][0].endings)
    first = first or (path, count)
    if count != first[1]:
      raise InputError("%s: %d choices per example, but %s has %d; every "
                       "split needs the same number" % ((path, count) + first))
  return examples, first and first[1]


def _choices_of(files, cls_id):
  """The number of choices of multiple-choice records: every choice's
  max_seq_length ids start with [CLS] (the length alone is ambiguous)."""
  ids = input_pipeline.first_record(files).get("input_ids", [])
  seq = FLAGS.max_seq_length
  if not ids or len(ids) % seq or any(ids[i] != cls_id
                                      for i in range(0, len(ids), seq)):
    raise InputError("--train_records=%s: input_ids are not choices of "
                     "--max_seq_length=%d, each starting with [CLS]" %
                     (files[0], seq))
  return len(ids) // seq


class _Records:
  """Writes a split's TFRecords and reads its predictions back."""

  def __init__(self, examples, tokenizer, task):
    self.examples = examples
    self.tokenizer = tokenizer
    self.task = task
    self._written = {}

  def write(self, split):
    """Featurizes `split` into output_dir once; returns (path, batch size)."""
    _, name, batch_flag = _SPLITS[split]
    path = os.path.join(FLAGS.output_dir, name)
    batch_size = FLAGS[batch_flag].value
    if split not in self._written:
      # The original pads eval/predict sets to whole batches only on TPU.
      pad = batch_size if FLAGS.use_tpu and split != "train" else None
      count = write_records(self.examples[split], FLAGS.max_seq_length,
                            self.tokenizer, path, pad_to_multiple_of=pad)
      logging.info("***** %s: %d examples (%d + %d padding), batch size %d",
                   split, count, len(self.examples[split]),
                   count - len(self.examples[split]), batch_size)
      self._written[split] = path, batch_size
    return self._written[split]

  def eval_results(self, trainer):
    """The metrics of eval_results.txt for the trainer's weights."""
    rows, batch_size = self.predict(trainer, "dev")
    return classifier_results.eval_results(self.task.name, rows, batch_size,
                                           False, trainer.global_step)

  def predict(self, trainer, split):
    """Model outputs + labels for every record of `split`, in file order."""
    path, batch_size = self.write(split)
    dataset = input_pipeline.eval_dataset(
        [path], self.task.feature_spec(False), batch_size)
    rows = list(trainer.predict(dataset, batch_size,
                                feature_keys=self.task.predict_keys))
    return rows, batch_size


def main(_):
  _check_flags()
  config = BertConfig.from_json_file(FLAGS.bert_config_file)
  config.check_max_seq_length(FLAGS.max_seq_length)
  # Every file is read now, so a bad row fails before any output.
  examples, num_choices = _read_splits()
  tokenizer = load_tokenizer(FLAGS.vocab_file, FLAGS.do_lower_case,
                             FLAGS.spm_model_file)
  if FLAGS.do_train and FLAGS.train_records:
    train_files = input_pipeline.record_files(FLAGS.train_records,
                                              "train_records")
    num_choices = num_choices or _choices_of(
        train_files, tokenizer.convert_tokens_to_ids(["[CLS]"])[0])
  task = MultipleChoiceTask(config, num_choices, FLAGS.max_seq_length)
  config.check_vocab(tokenizer.vocab,
                     FLAGS.spm_model_file or FLAGS.vocab_file)
  config.check_segments(True, "multiple choice (context + ending)")
  records = _Records(examples, tokenizer, task)

  num_train_steps, num_warmup_steps, steps_per_epoch = 0, 0, None
  if FLAGS.do_train:
    if FLAGS.train_records:
      num_train = input_pipeline.count_records(
          train_files, task.feature_spec(True), "train_records",
          {"label_ids": num_choices})
    else:
      num_train = len(examples["train"])
    steps_per_epoch = num_train / FLAGS.train_batch_size
    num_train_steps, num_warmup_steps = script_runner.train_steps(
        num_train, FLAGS.train_batch_size,
        FLAGS.num_train_epochs, FLAGS.warmup_proportion)
  # Before any output, so that a bad --best_metric leaves nothing behind.
  hook = eval_flags.eval_hook(FLAGS, records.eval_results,
                              FLAGS.bert_config_file, steps_per_epoch,
                              classifier_results.metric_names(task.name,
                                                              False))
  make_output_dir(FLAGS.output_dir)
  trainer = script_runner.build_trainer(FLAGS, task, num_train_steps,
                                        num_warmup_steps)

  if FLAGS.do_train:
    if not FLAGS.train_records:
      train_files = [records.write("train")[0]]
    logging.info("***** Running training: %d steps, %d warmup",
                 num_train_steps, num_warmup_steps)
    dataset_fn = input_pipeline.training_dataset_fn(
        train_files, task.feature_spec(True), FLAGS.train_batch_size)
    trainer.train(dataset_fn, num_train_steps, eval_hook=hook)

  if FLAGS.do_eval or FLAGS.do_predict:
    eval_flags.restore_predict_checkpoint(FLAGS, trainer)
  if FLAGS.do_eval:
    write_eval_results(os.path.join(FLAGS.output_dir, "eval_results.txt"),
                       records.eval_results(trainer))

  if FLAGS.do_predict:
    rows, _ = records.predict(trainer, "test")
    path = os.path.join(FLAGS.output_dir, "test_results.tsv")
    with atomic_output(path) as writer:
      writer.writelines(classifier_results.prediction_lines(rows))
    logging.info("wrote %s", path)


def run():
  """Console-script entry point (flags are defined at import)."""
  app.run_app(main)


if __name__ == "__main__":
  run()
