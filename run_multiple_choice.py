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

from bert_tf.jobs import finetune
from bert_tf.jobs import finetune_flags
from bert_tf.jobs import multiple_choice as multiple_choice_job
from bert_tf.runtime import app

FLAGS = flags.FLAGS


def define_flags():
  """run_classifier.py's flags with the paper's SWAG recipe as defaults."""
  flags.DEFINE_string(
    "data_dir",
    None,
    "The input data dir: SWAG's train.csv, val.csv, test.csv, or "
    "train.jsonl, val.jsonl (or dev.jsonl), test.jsonl.",
  )
  finetune_flags.define_flags(
    max_seq_length=128, records_of="data_prep.multiple_choice"
  )
  # The paper's SWAG recipe (run_classifier's are batch 32, lr 5e-5).
  FLAGS.set_default("train_batch_size", 16)
  FLAGS.set_default("learning_rate", 2e-5)


def main(_):
  finetune.run(
    multiple_choice_job.MultipleChoiceJob(
      multiple_choice_job.MultipleChoiceConfig.from_flags(FLAGS)
    )
  )


def run():
  """Console-script entry point."""
  define_flags()
  app.run_app(main)


if __name__ == "__main__":
  run()
