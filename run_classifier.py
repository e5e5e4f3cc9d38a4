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
and --predict_checkpoint=best (bert_tf/jobs/eval_flags.py).
"""

from absl import flags

from bert_tf.io_utils import InputError
from bert_tf.jobs import finetune
from bert_tf.runtime import app
from bert_tf.tasks.result_files import write_eval_results
from bert_tf.tasks.result_files import write_lines
from data_prep.classifier import flags as classifier_flags
from data_prep.classifier.features import write_examples_to_tfrecord

FLAGS = flags.FLAGS
# Loaded when a job runs (TensorFlow, scikit-learn): --help answers at once.
classification = app.lazy_import("bert_tf.tasks.classification")
classifier_results = app.lazy_import("bert_tf.tasks.classifier_results")


def define_flags():
  """The original run_classifier.py flags, and ours."""
  flags.DEFINE_string(
    "data_dir",
    None,
    "The input data dir. Should contain the .tsv files (or other data "
    "files) for the task.",
  )
  flags.DEFINE_string("task_name", None, "The name of the task to train.")
  flags.DEFINE_string(
    "glue_submission_file",
    None,
    "With --do_predict, also write the test predictions here as a GLUE "
    "submission TSV (header `index<TAB>prediction`, label names; "
    "regression: the score), e.g. $OUTPUT_DIR/MRPC.tsv.",
  )
  finetune.define_flags(max_seq_length=128, records_of="data_prep.classifier")
  classifier_flags.define_task_flags()


class ClassifierJob(finetune.Job):
  """GLUE / XNLI / TSV examples -> ClassificationTask -> eval_results.txt,
  test_results.tsv."""

  required = ("data_dir", "task_name", "bert_config_file", "output_dir")

  def check_flags(self, config):
    if FLAGS.glue_submission_file and not FLAGS.do_predict:
      raise InputError("--glue_submission_file needs --do_predict")
    if FLAGS.glue_submission_file and FLAGS.multi_label:
      raise InputError("--glue_submission_file: not for --multi_label")
    self.processor = classifier_flags.processor_from_flags(FLAGS)
    self.label_list = self.processor.get_labels()

  def read(self, split):
    return self.processor.get_examples(split)

  def build_task(self, config, tokenizer):
    self.tokenizer = tokenizer
    num_labels = 1 if self.processor.is_regression else len(self.label_list)
    return classification.ClassificationTask(
      config, num_labels, FLAGS.max_seq_length, self.processor.is_multi_label
    )

  def segments(self):
    return (
      any(e.text_b for examples in self.examples.values() for e in examples),
      "--task_name=%s" % self.processor.name,
    )

  def write_records(self, split, path):
    self.write_padded(
      split,
      path,
      lambda examples, path, pad: write_examples_to_tfrecord(
        examples,
        self.label_list,
        FLAGS.max_seq_length,
        self.tokenizer,
        path,
        pad_to_multiple_of=pad,
        multi_label=self.processor.is_multi_label,
      ),
    )

  def run_settings(self):
    return (
      "classifier",
      {
        "task_name": self.processor.name,
        "labels": self.label_list,
        "regression": self.processor.is_regression,
        "multi_label": self.processor.is_multi_label,
      },
      {},
    )

  def _multi_labels(self):
    return self.label_list if self.processor.is_multi_label else None

  def eval_results(self, trainer):
    return classifier_results.eval_results(
      self.processor.name,
      self.predict_rows(trainer, "dev", _KEYS),
      self.batch_size("dev"),
      self.processor.is_regression,
      trainer.global_step,
      self._multi_labels(),
    )

  def metric_names(self):
    return classifier_results.metric_names(
      self.processor.name, self.processor.is_regression, self._multi_labels()
    )

  def write_outputs(self, trainer):
    if FLAGS.do_eval:
      write_eval_results(
        self.output_path("eval_results.txt"), self.eval_results(trainer)
      )
    if FLAGS.do_predict:
      rows = self.predict_rows(trainer, "test", _KEYS)
      write_lines(
        self.output_path("test_results.tsv"),
        classifier_results.prediction_lines(rows, self.processor.is_regression),
      )
      if FLAGS.glue_submission_file:
        write_lines(
          FLAGS.glue_submission_file,
          classifier_results.glue_submission_lines(rows, self.label_list),
        )


_KEYS = ("label_ids", "is_real_example")


def main(_):
  finetune.run(ClassifierJob(FLAGS))


def run():
  """Console-script entry point."""
  define_flags()
  app.run_app(main)


if __name__ == "__main__":
  run()
