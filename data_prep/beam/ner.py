"""data_prep.ner as a Beam pipeline: `Featurizer.windows` (the
single-process step) on chunks of whole documents -- a window's context
never crosses a document -- written by `records.write_record_shards`.

Example:
    count, files = write_windows_beam(sentences, featurizer_args,
                                      "out/train.tf_record", 4,
                                      "DirectRunner", [])
"""

import functools

from data_prep.beam.pipeline import PerWorker
from data_prep.beam.records import write_record_shards
from data_prep.ner.features import new_featurizer
from data_prep.ner.records import window_record

_CHUNK_SENTENCES = 500  # about; chunks end at a document's end


def _encode(featurizer, sentences, max_seq_length):
  """Sentences of whole documents -> window records."""
  return [
    window_record(window, max_seq_length)
    for window in featurizer.windows(sentences)
  ]


def _document_chunks(sentences):
  chunks = [[]]
  for i, sentence in enumerate(sentences):
    if (
      len(chunks[-1]) >= _CHUNK_SENTENCES
      and sentence.document != sentences[i - 1].document
    ):
      chunks.append([])
    chunks[-1].append(sentence)
  return chunks


def write_windows_beam(
  sentences, featurizer_args, output_file, num_output_shards, runner, beam_args
):
  """-> (number of windows, shard file names)."""
  encode = PerWorker(
    functools.partial(_encode, max_seq_length=featurizer_args[2]),
    new_featurizer,
    *featurizer_args,
  )
  counters, files = write_record_shards(
    _document_chunks(sentences),
    encode,
    output_file,
    num_output_shards,
    runner,
    beam_args,
  )
  return counters.get("records", 0), files
