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

from bert_tf.jobs import classifier as classifier_job
from bert_tf.jobs import finetune
from bert_tf.jobs import finetune_flags
from bert_tf.runtime import app
from bert_tf.runtime import flag_needs
from data_prep.classifier import flags as classifier_flags

FLAGS = flags.FLAGS


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
  flag_needs.requires("glue_submission_file", "do_predict")
  finetune_flags.define_flags(
    max_seq_length=128, records_of="data_prep.classifier"
  )
  classifier_flags.define_task_flags()


def main(_):
  finetune.run(
    classifier_job.ClassifierJob(
      classifier_job.ClassifierConfig.from_flags(FLAGS)
    )
  )


def run():
  """Console-script entry point."""
  define_flags()
  app.run_app(main)


if __name__ == "__main__":
  run()
