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
--predict_checkpoint=best (bert_tf/jobs/eval_flags.py).
"""

from absl import flags

from bert_tf.jobs import finetune
from bert_tf.jobs import finetune_flags
from bert_tf.jobs import squad as squad_job
from bert_tf.runtime import app
from bert_tf.runtime import flag_checks
from bert_tf.runtime import flag_needs
from data_prep.squad import flags as squad_flags

FLAGS = flags.FLAGS


def define_flags():
  """The original run_squad.py flags, and ours."""
  flags.DEFINE_string(
    "train_file", None, "SQuAD json for training. E.g., train-v1.1.json"
  )
  flags.DEFINE_string(
    "predict_file",
    None,
    "SQuAD json for predictions. E.g., dev-v1.1.json or test-v1.1.json",
  )
  flags.DEFINE_bool("do_predict", False, "Whether to run eval on the dev set.")
  flags.DEFINE_integer(
    "predict_batch_size", 8, "Total batch size for predictions."
  )
  flag_checks.positive("predict_batch_size")
  flags.DEFINE_bool(
    "verbose_logging",
    False,
    "If true, all of the warnings related to data processing will be "
    "printed. A number of warnings are expected for a normal SQuAD "
    "evaluation.",
  )
  flag_needs.ignored(
    "verbose_logging",
    "answers not found in their context are counted in one warning",
  )
  finetune_flags.define_flags(
    max_seq_length=384, records_of="data_prep.squad --is_training", splits=()
  )
  squad_flags.define_feature_flags()
  squad_flags.define_prediction_flags()
  # The original accepted it for SQuAD 1.1, where no answer is null.
  flag_needs.requires(
    "null_score_diff_threshold", "version_2_with_negative", warn=True
  )


def main(_):
  finetune.run(squad_job.SquadJob(squad_job.SquadConfig.from_flags(FLAGS)))


def run():
  """Console-script entry point."""
  define_flags()
  app.run_app(main)


if __name__ == "__main__":
  run()
