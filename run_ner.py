r"""BERT for named-entity recognition on CoNLL-format files (CoNLL-2003).

Fine-tuned or feature-based, as in the BERT paper (§5.3): WordPiece each
word, label its first piece, predict every word from its first piece.

    python run_ner.py --data_dir=$CONLL_DIR --do_train --do_eval \
      --do_predict --vocab_file=$BERT_DIR/vocab.txt \
      --bert_config_file=$BERT_DIR/bert_config.json \
      --init_checkpoint=$BERT_DIR/bert_model.ckpt --do_lower_case=False \
      --max_seq_length=128 --train_batch_size=32 --learning_rate=5e-5 \
      --num_train_epochs=3.0 --document_context --output_dir=/tmp/ner/

--data_dir reads train.txt, valid.txt (or dev.txt) and test.txt; --train_file
/ --eval_file / --predict_file name other files. Columns: word first, tag
last (`token POS chunk tag` or `token tag`), blank line between sentences,
`-DOCSTART-` lines between documents; a predict file may hold words only.
--tag_scheme=iob1 converts IOB1 tags to IOB2. The labels are `O` plus `B-X`
/ `I-X` for every entity type X of the training file (or --labels). Long
sentences become overlapping windows (each word predicted once, where it has
most context); --document_context fills each window with the neighbouring
sentences of the document as unlabelled context.

--feature_mode=fine_tune (default) trains everything; embeddings,
second_to_last, last, weighted_sum_last_four, concat_last_four or
weighted_sum_all freeze the encoder and train a two-layer BiLSTM
(--lstm_units per direction) and the classifier on those layers.
--num_frozen_layers=N freezes the embeddings and the lowest N layers.
--train_records trains on the records of `python -m data_prep.ner` (e.g.
Beam shards) with --labels as that command printed them.

Writes train/eval/predict.tf_record, checkpoints (re-running resumes),
eval_results.txt (eval_precision, eval_recall, eval_f1 and per entity type
eval_f1_PER ..., entity level as conlleval; eval_loss; global_step),
label_list.txt (the labels in label-id order, one a line, for
`python -m bert_tf.export_saved_model --task=ner --labels_file`),
eval_predictions.txt and test_predictions.txt (`word gold predicted` per
input word in input order, gold in IOB2, a blank line after each sentence,
no -DOCSTART- lines; `word predicted` for a file without tags) and, if the
predict file has tags, test_results.txt (the same keys with test_).
"""

from absl import flags

from bert_tf.jobs import finetune
from bert_tf.jobs import finetune_flags
from bert_tf.jobs import ner as ner_job
from bert_tf.runtime import app
from bert_tf.runtime import flag_checks
from bert_tf.runtime import flag_needs

FLAGS = flags.FLAGS


def define_flags():
  """run_classifier.py's flags plus the CoNLL files and feature modes."""
  flags.DEFINE_string(
    "data_dir",
    None,
    "Folder with train.txt, valid.txt (or dev.txt) and test.txt.",
  )
  flags.DEFINE_string("train_file", None, "Training file (default: data_dir).")
  flags.DEFINE_string("eval_file", None, "Dev file for --do_eval.")
  flag_needs.requires(
    "eval_file", "do_eval", "eval_every_steps", "eval_every_epochs"
  )
  flags.DEFINE_string(
    "predict_file", None, "File to tag with --do_predict (tags optional)."
  )
  flag_needs.requires("predict_file", "do_predict")
  flags.DEFINE_string(
    "tag_scheme", "iob2", "Tags of the files: iob2 or iob1 (converted to iob2)."
  )
  flags.DEFINE_string(
    "labels",
    None,
    "Comma-separated label list (default: from the "
    "training file), e.g. O,B-PER,I-PER. Needed with "
    "--train_records: the list data_prep.ner printed.",
  )
  flags.DEFINE_bool(
    "document_context",
    False,
    "Fill each window with the neighbouring sentences of the "
    "same document, as context without labels.",
  )
  flags.DEFINE_string(
    "feature_mode",
    "fine_tune",
    "fine_tune, or a frozen-encoder feature mode: "
    "embeddings, second_to_last, last, "
    "weighted_sum_last_four, concat_last_four, "
    "weighted_sum_all.",
  )
  flags.DEFINE_integer(
    "lstm_units", 768, "BiLSTM units per direction in a feature mode."
  )
  flag_checks.positive("lstm_units")
  flag_needs.requires("lstm_units", "feature_mode!=fine_tune")
  finetune_flags.define_flags(max_seq_length=128, records_of="data_prep.ner")


def main(_):
  finetune.run(ner_job.NerJob(ner_job.NerConfig.from_flags(FLAGS)))


def run():
  """Console-script entry point."""
  define_flags()
  app.run_app(main)


if __name__ == "__main__":
  run()
