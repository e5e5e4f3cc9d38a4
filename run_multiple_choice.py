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

from absl import flags

from bert_tf.io_utils import InputError
from bert_tf.jobs import finetune
from bert_tf.runtime import app
from bert_tf.tasks.result_files import write_eval_results
from bert_tf.tasks.result_files import write_lines
from data_prep.multiple_choice import examples as mc_examples
from data_prep.multiple_choice.features import write_records

FLAGS = flags.FLAGS
# Loaded when a job runs (TensorFlow, scikit-learn): --help answers at once.
classifier_results = app.lazy_import("bert_tf.tasks.classifier_results")
input_pipeline = app.lazy_import("bert_tf.training.input_pipeline")
multiple_choice = app.lazy_import("bert_tf.tasks.multiple_choice")


def define_flags():
  """run_classifier.py's flags with the paper's SWAG recipe as defaults."""
  flags.DEFINE_string(
    "data_dir",
    None,
    "The input data dir: SWAG's train.csv, val.csv, test.csv, or "
    "train.jsonl, val.jsonl (or dev.jsonl), test.jsonl.",
  )
  finetune.define_flags(
    max_seq_length=128, records_of="data_prep.multiple_choice"
  )
  # The paper's SWAG recipe (run_classifier's are batch 32, lr 5e-5).
  FLAGS.set_default("train_batch_size", 16)
  FLAGS.set_default("learning_rate", 2e-5)


class MultipleChoiceJob(finetune.Job):
  """SWAG / JSON-lines examples -> MultipleChoiceTask -> eval_results.txt,
  test_results.tsv."""

  pairs = (True, "multiple choice (context + ending)")
  _first = None  # (path, choices) of the first split read

  def check_flags(self, config):
    only_records = FLAGS.train_records and not (
      FLAGS.do_eval or FLAGS.do_predict or self.periodic_eval()
    )
    if not FLAGS.data_dir and not only_records:
      raise InputError("--data_dir is required")

  def read(self, split):
    path = mc_examples.split_file(FLAGS.data_dir, split)
    examples = mc_examples.read_examples(path, split)
    count = len(examples[0].endings)
    first = self._first = self._first or (path, count)
    if count != first[1]:
      raise InputError(
        "%s: %d choices per example, but %s has %d; every "
        "split needs the same number" % ((path, count) + first)
      )
    return examples

  def build_task(self, config, tokenizer):
    self.tokenizer = tokenizer
    if self.examples:
      num_choices = self._first[1]
    else:
      num_choices = self._choices_in_records(
        tokenizer.convert_tokens_to_ids(["[CLS]"])[0]
      )
    return multiple_choice.MultipleChoiceTask(
      config, num_choices, FLAGS.max_seq_length
    )

  def _choices_in_records(self, cls_id):
    """The number of choices of --train_records: every choice's
    max_seq_length ids start with [CLS] (the length alone is ambiguous)."""
    files = input_pipeline.record_files(FLAGS.train_records, "train_records")
    ids = input_pipeline.first_record(files).get("input_ids", [])
    seq = FLAGS.max_seq_length
    if (
      not ids
      or len(ids) % seq
      or any(ids[i] != cls_id for i in range(0, len(ids), seq))
    ):
      raise InputError(
        "--train_records=%s: input_ids are not choices of "
        "--max_seq_length=%d, each starting with [CLS]" % (files[0], seq)
      )
    return len(ids) // seq

  def train_value_limits(self):
    return {"label_ids": self.task.num_choices}

  def write_records(self, split, path):
    self.write_padded(
      split,
      path,
      lambda examples, path, pad: write_records(
        examples,
        FLAGS.max_seq_length,
        self.tokenizer,
        path,
        pad_to_multiple_of=pad,
      ),
    )

  def run_settings(self):
    return "multiple_choice", {"num_choices": self.task.num_choices}, {}

  def eval_results(self, trainer):
    return classifier_results.eval_results(
      self.task.name,
      self.predict_rows(trainer, "dev"),
      self.batch_size("dev"),
      False,
      trainer.global_step,
    )

  def metric_names(self):
    return classifier_results.metric_names(self.task.name, False)

  def write_outputs(self, trainer):
    if FLAGS.do_eval:
      write_eval_results(
        self.output_path("eval_results.txt"), self.eval_results(trainer)
      )
    if FLAGS.do_predict:
      write_lines(
        self.output_path("test_results.tsv"),
        classifier_results.prediction_lines(self.predict_rows(trainer, "test")),
      )


def main(_):
  finetune.run(MultipleChoiceJob(FLAGS))


def run():
  """Console-script entry point."""
  define_flags()
  app.run_app(main)


if __name__ == "__main__":
  run()
