r"""Writes one split of a classifier task as a TFRecord file.

The records are the ones the original run_classifier writes to
train.tf_record / eval.tf_record / predict.tf_record: input_ids, input_mask,
segment_ids, label_ids (int64; float for regression) and is_real_example.

Example:
    python -m data_prep.classifier --task_name=mrpc --data_dir=glue/MRPC \
      --split=train --vocab_file=vocab.txt --do_lower_case \
      --max_seq_length=128 --output_file=out/train.tf_record

Tasks: cola, sst-2, mrpc, sts-b, qqp, mnli (matched dev/test), mnli-mm
(mismatched dev/test), qnli, rte, wnli, xnli, fakenews (the WSDM 2019 Cup's
CSV files), and tsv for your own files (see data_prep/classifier/flags.py for
--text_a_column, --labels, --regression...).
"""

import collections

from absl import flags

from bert_tf.io_utils import InputError
from bert_tf.runtime import app
from bert_tf.runtime import bert_flags
from bert_tf.runtime import flag_checks
from bert_tf.tokenizers.loading import load_tokenizer
from data_prep.beam import pipeline as beam_pipeline
from data_prep.classifier import features as classifier_features
from data_prep.classifier import flags as classifier_flags
from data_prep.classifier import tasks as classifier_tasks
from data_prep.classifier.processor import SPLITS

FLAGS = flags.FLAGS


def define_flags():
  """Defines this command's flags (the original names and defaults)."""
  flags.DEFINE_string(
    "task_name",
    None,
    "The name of the task: " + ", ".join(classifier_tasks.TASK_NAMES) + ".",
  )
  flags.DEFINE_string(
    "data_dir",
    None,
    "The input data dir. Should contain the .tsv files (or "
    "other data files) for the task.",
  )
  flags.DEFINE_enum("split", "train", SPLITS, "Which split to write.")
  flags.DEFINE_string(
    "input_file",
    None,
    "Read this file instead of the split's usual file in "
    "data_dir (same column layout).",
  )
  flags.DEFINE_integer(
    "pad_to_multiple_of",
    0,
    "If > 0, append padding examples (is_real_example=0) "
    "until the count is a multiple of this (TPU eval/predict "
    "batch size).",
  )
  flag_checks.non_negative("pad_to_multiple_of")
  flags.DEFINE_string("output_file", None, "Output TFRecord file.")
  bert_flags.define_tokenizer_flags()
  bert_flags.define_spm_model_file()
  bert_flags.define_max_seq_length(128)
  classifier_flags.define_task_flags()
  beam_pipeline.define_runner_flags(
    "output shards <output_file>-SSSSS-of-NNNNN, exactly this many "
    "(default 1); with fewer chunks of 1,000 examples than shards, some "
    "are empty."
  )


def main(argv):
  beam_args = beam_pipeline.check_beam_args(argv)
  if not FLAGS.task_name:
    raise InputError("--task_name is required")
  if not FLAGS.data_dir and not FLAGS.input_file:
    raise InputError("--data_dir (or --input_file) is required")
  if not FLAGS.output_file:
    raise InputError("--output_file is required")
  tokenizer_args = (FLAGS.vocab_file, FLAGS.do_lower_case, FLAGS.spm_model_file)
  tokenizer = load_tokenizer(*tokenizer_args)
  processor = classifier_flags.processor_from_flags(FLAGS)
  examples = processor.get_examples(FLAGS.split, FLAGS.input_file)
  if FLAGS.runner:
    # pylint: disable-next=g-import-not-at-top
    from data_prep.beam.classifier import write_records_beam

    padded = classifier_features.padded_examples(
      examples, FLAGS.pad_to_multiple_of or None
    )
    outputs = write_records_beam(
      padded,
      (
        processor.get_labels(),
        FLAGS.max_seq_length,
        tokenizer_args,
        processor.is_multi_label,
      ),
      FLAGS.output_file,
      FLAGS.num_output_shards,
      FLAGS.runner,
      beam_args,
    )
    written = len(padded)
  else:
    outputs = [FLAGS.output_file]
    written = classifier_features.write_examples_to_tfrecord(
      examples,
      processor.get_labels(),
      FLAGS.max_seq_length,
      tokenizer,
      FLAGS.output_file,
      FLAGS.pad_to_multiple_of or None,
      processor.is_multi_label,
    )
  print(
    "task=%s split=%s examples=%d padding=%d records=%d -> %s"
    % (
      processor.name,
      FLAGS.split,
      len(examples),
      written - len(examples),
      written,
      ", ".join(outputs),
    )
  )
  if FLAGS.split != "test" and not processor.is_regression:
    counts = collections.Counter(
      label
      for e in examples
      for label in (e.label if processor.is_multi_label else [e.label])
    )
    print(
      "labels: "
      + ", ".join(
        "%s=%d" % (label, counts[label]) for label in processor.get_labels()
      )
    )


def run():
  """Console-script entry point."""
  define_flags()
  app.run_app(main, beam_pipeline.parse_flags)


if __name__ == "__main__":
  run()
