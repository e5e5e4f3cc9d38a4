r"""Writes a multiple-choice file (SWAG .csv or generic .jsonl) as a TFRecord
file: the records run_multiple_choice.py writes, in file order.

    python -m data_prep.multiple_choice --input_file=swag/train.csv \
      --output_file=out/train.tf_record --vocab_file=vocab.txt \
      --max_seq_length=128

`--split=test` reads a file without labels. `--runner=DirectRunner` (or
another Beam runner) writes `<output_file>-SSSSS-of-NNNNN` shards that
concatenate to the same file.
"""

from absl import flags

from bert_tf.io_utils import InputError
from bert_tf.runtime import app
from bert_tf.runtime import bert_flags
from bert_tf.tokenizers.loading import load_tokenizer
from data_prep.beam import pipeline as beam_pipeline
from data_prep.multiple_choice import examples as mc_examples
from data_prep.multiple_choice.features import write_records

FLAGS = flags.FLAGS


def define_flags():
  """Defines this command's flags."""
  flags.DEFINE_string("input_file", None, "SWAG .csv or generic .jsonl.")
  flags.DEFINE_enum(
    "split",
    "train",
    ["train", "dev", "test"],
    "The file's split (test: no labels).",
  )
  flags.DEFINE_string("output_file", None, "Output TFRecord file.")
  bert_flags.define_tokenizer_flags()
  bert_flags.define_spm_model_file()
  bert_flags.define_max_seq_length(128)
  beam_pipeline.define_runner_flags(
    "output shards <output_file>-SSSSS-of-NNNNN, exactly this many "
    "(default 1); with fewer chunks of 1,000 examples than shards, some "
    "are empty."
  )


def main(argv):
  beam_args = beam_pipeline.check_beam_args(argv)
  for name in ("input_file", "output_file"):
    if not FLAGS[name].value:
      raise InputError("--%s is required" % name)
  examples = mc_examples.read_examples(FLAGS.input_file, FLAGS.split)
  tokenizer_args = (FLAGS.vocab_file, FLAGS.do_lower_case, FLAGS.spm_model_file)
  tokenizer = load_tokenizer(*tokenizer_args)
  if FLAGS.runner:
    # pylint: disable-next=g-import-not-at-top
    from data_prep.beam.multiple_choice import write_records_beam

    outputs = write_records_beam(
      examples,
      tokenizer_args,
      FLAGS.max_seq_length,
      FLAGS.output_file,
      FLAGS.num_output_shards,
      FLAGS.runner,
      beam_args,
    )
  else:
    write_records(examples, FLAGS.max_seq_length, tokenizer, FLAGS.output_file)
    outputs = [FLAGS.output_file]
  print(
    "%d examples of %d choices -> %s"
    % (len(examples), len(examples[0].endings), ", ".join(outputs))
  )


def run():
  """Console-script entry point."""
  define_flags()
  app.run_app(main, beam_pipeline.parse_flags)


if __name__ == "__main__":
  run()
