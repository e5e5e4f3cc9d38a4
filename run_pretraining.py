r"""BERT pre-training (masked LM + next sentence prediction).

The original run_pretraining.py on the Keras 3 engine: same flags, defaults
and outputs (checkpoints and TensorBoard events in --output_dir, and
eval_results.txt with global_step, loss, masked_lm_accuracy, masked_lm_loss,
next_sentence_accuracy, next_sentence_loss).

    python -m data_prep.create_pretraining_data --input_file=sample_text.txt \
      --output_file=/tmp/tf_examples.tfrecord --vocab_file=$BERT_DIR/vocab.txt
    python run_pretraining.py --input_file=/tmp/tf_examples.tfrecord \
      --output_dir=/tmp/pretraining_output --do_train=True --do_eval=True \
      --bert_config_file=$BERT_DIR/bert_config.json \
      --init_checkpoint=$BERT_DIR/bert_model.ckpt --train_batch_size=32 \
      --max_seq_length=128 --max_predictions_per_seq=20 \
      --num_train_steps=20 --num_warmup_steps=10 --learning_rate=2e-5

As in the original, eval reads the same --input_file sequentially for
--max_eval_steps batches (there is no separate eval set: point --input_file
at held-out records for a real evaluation). --init_checkpoint loads an
original checkpoint including its `cls/*` heads; a run restarted in the same
--output_dir resumes. `python -m bert_tf.export_checkpoint` writes the latest
checkpoint of a run as an original `bert_model.ckpt`.

New: --dynamic_masking re-masks every training batch (see
bert_tf/tasks/dynamic_masking.py); it needs --vocab_file for [CLS]/[SEP]/[MASK].
--eval_every_steps runs the --do_eval evaluation during training
(eval_history.jsonl, TensorBoard in output_dir/eval/), with --best_metric
(e.g. masked_lm_loss --best_mode=min; best/ holds the encoder and the cls/
heads) and --early_stopping_patience (bert_tf/jobs/eval_flags.py).
"""

from absl import flags

from bert_tf.jobs import engine_flags
from bert_tf.jobs import eval_flags
from bert_tf.jobs import pretraining as pretraining_job
from bert_tf.runtime import app
from bert_tf.runtime import bert_flags
from bert_tf.runtime import flag_checks
from bert_tf.runtime import flag_needs

FLAGS = flags.FLAGS


def define_flags():
  """The original run_pretraining.py flags, and ours."""
  bert_flags.define_model_flags()
  flags.DEFINE_string(
    "input_file",
    None,
    "Input TF example files (can be a glob or comma separated).",
  )
  bert_flags.define_output_dir()
  flags.DEFINE_integer(
    "max_seq_length",
    128,
    "The maximum total input sequence length after WordPiece tokenization. "
    "Sequences longer than this will be truncated, and sequences shorter "
    "than this will be padded. Must match data generation.",
  )
  flag_checks.at_least("max_seq_length", 3)
  flags.DEFINE_integer(
    "max_predictions_per_seq",
    20,
    "Maximum number of masked LM predictions per sequence. "
    "Must match data generation.",
  )
  flag_checks.positive("max_predictions_per_seq")
  flags.DEFINE_bool("do_train", False, "Whether to run training.")
  flags.DEFINE_bool("do_eval", False, "Whether to run eval on the dev set.")
  flags.DEFINE_integer("train_batch_size", 32, "Total batch size for training.")
  flag_checks.positive("train_batch_size")
  flags.DEFINE_integer("eval_batch_size", 8, "Total batch size for eval.")
  flag_checks.positive("eval_batch_size")
  flags.DEFINE_float(
    "learning_rate", 5e-5, "The initial learning rate for Adam."
  )
  flag_checks.non_negative("learning_rate")
  flags.DEFINE_integer("num_train_steps", 100000, "Number of training steps.")
  flag_checks.non_negative("num_train_steps")
  flags.DEFINE_integer("num_warmup_steps", 10000, "Number of warmup steps.")
  flag_checks.non_negative("num_warmup_steps")
  flags.DEFINE_integer("max_eval_steps", 100, "Maximum number of eval steps.")
  flag_checks.positive("max_eval_steps")
  # New flags.
  flags.DEFINE_bool(
    "dynamic_masking",
    False,
    "Draw new masked-LM masks for every training batch (tf_text "
    "mask_language_model, 80/10/10) from the tokens of --input_file, "
    "instead of the masks stored there. Needs --vocab_file.",
  )
  # Evaluation reads the stored masks.
  flag_needs.requires("dynamic_masking", "do_train")
  flags.DEFINE_string(
    "vocab_file",
    None,
    "With --dynamic_masking: the vocabulary of the data (for the ids of "
    "[CLS], [SEP], [MASK] and the random replacement tokens).",
  )
  flags.DEFINE_float(
    "masked_lm_prob", 0.15, "With --dynamic_masking: masked LM probability."
  )
  flag_checks.in_range("masked_lm_prob", 0, 1)
  flag_needs.requires("masked_lm_prob", "dynamic_masking")
  flags.DEFINE_bool(
    "do_whole_word_mask",
    False,
    "With --dynamic_masking: mask whole words (a piece and its '##' "
    "pieces), as create_pretraining_data --do_whole_word_mask does.",
  )
  flag_needs.requires(
    "do_whole_word_mask",
    "dynamic_masking",
    why="static masks are made by create_pretraining_data",
  )
  engine_flags.define_engine_flags()
  eval_flags.define_eval_flags(epochs=False, predict_checkpoint=False)


def main(_):
  pretraining_job.PretrainingJob(
    pretraining_job.PretrainingConfig.from_flags(FLAGS)
  ).run()


def run():
  """Console-script entry point."""
  define_flags()
  app.run_app(main)


if __name__ == "__main__":
  run()
