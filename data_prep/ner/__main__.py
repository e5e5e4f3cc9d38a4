r"""Writes a CoNLL file's tagging windows as a TFRecord file (run_ner.py's).

    python -m data_prep.ner --input_file=conll/train.txt \
      --output_file=out/train.tf_record --vocab_file=vocab.txt \
      --do_lower_case=False --max_seq_length=128 --document_context

The records are the ones run_ner.py writes (input_ids, input_mask,
segment_ids, label_ids, label_weights), in file order; the labels are
--labels or `O` plus B-/I- of every entity type of the file (printed, in
label-id order). `--runner=DirectRunner` (or another Beam runner) writes
`<output_file>-SSSSS-of-NNNNN` shards that concatenate to the same file.
"""

from absl import flags

from bert_tf.io_utils import InputError
from bert_tf.io_utils import require_file
from bert_tf.runtime import app
from bert_tf.runtime import bert_flags
from data_prep.beam import pipeline as beam_pipeline
from data_prep.ner import conll
from data_prep.ner.features import new_featurizer
from data_prep.ner.records import write_windows

FLAGS = flags.FLAGS


def define_flags():
  """Defines this command's flags (run_ner.py's names and defaults)."""
  flags.DEFINE_string("input_file", None, "CoNLL file (word first, tag last).")
  flags.DEFINE_string("output_file", None, "Output TFRecord file.")
  flags.DEFINE_string(
    "tag_scheme", "iob2", "Tags of the file: iob2 or iob1 (converted to iob2)."
  )
  flags.DEFINE_string(
    "labels", None, "Comma-separated label list (default: from the file)."
  )
  flags.DEFINE_bool(
    "document_context",
    False,
    "Fill each window with the neighbouring sentences of the "
    "same document, as context without labels.",
  )
  bert_flags.define_tokenizer_flags()
  bert_flags.define_spm_model_file()
  bert_flags.define_max_seq_length(128)
  beam_pipeline.define_runner_flags(
    "output shards <output_file>-SSSSS-of-NNNNN, exactly this many "
    "(default 1); with fewer chunks of whole documents (~500 sentences) "
    "than shards, some are empty."
  )


def main(argv):
  beam_args = beam_pipeline.check_beam_args(argv)
  for name in ("input_file", "output_file"):
    if not FLAGS[name].value:
      raise InputError("--%s is required" % name)
  require_file(FLAGS.input_file, "input_file")
  sentences = conll.read_conll(FLAGS.input_file, FLAGS.tag_scheme)
  if FLAGS.labels:
    labels = conll.parse_labels(FLAGS.labels)
  elif conll.is_labelled(sentences):
    labels = conll.label_list(sentences)
  else:
    raise InputError("%s: no tags; give --labels" % FLAGS.input_file)
  if conll.is_labelled(sentences):
    conll.check_tags(sentences, labels)
  args = (
    (FLAGS.vocab_file, FLAGS.do_lower_case, FLAGS.spm_model_file),
    labels,
    FLAGS.max_seq_length,
    FLAGS.document_context,
  )
  single = new_featurizer(*args)  # checks the vocab and settings up front
  if FLAGS.runner:
    # pylint: disable-next=g-import-not-at-top
    from data_prep.beam.ner import write_windows_beam

    count, outputs = write_windows_beam(
      sentences,
      args,
      FLAGS.output_file,
      FLAGS.num_output_shards,
      FLAGS.runner,
      beam_args,
    )
  else:
    count = write_windows(
      FLAGS.output_file, single.windows(sentences), FLAGS.max_seq_length
    )
    outputs = [FLAGS.output_file]
  print(
    "%d sentences -> %d windows -> %s"
    % (len(sentences), count, ", ".join(outputs))
  )
  print("labels: " + ",".join(labels))


def run():
  """Console-script entry point."""
  define_flags()
  app.run_app(main, beam_pipeline.parse_flags)


if __name__ == "__main__":
  run()
