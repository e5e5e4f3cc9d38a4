"""data_prep.ner as a Beam pipeline: `Featurizer.windows` (the
single-process step) on chunks of whole documents -- a window's context
never crosses a document -- written by `records.write_record_shards`.

Example:
    count, files = write_windows_beam(sentences, featurizer_args,
                                      "out/train.tf_record", 4,
                                      "DirectRunner", [])
"""

from data_prep.beam.records import write_record_shards
from data_prep.ner.records import window_record

_CHUNK_SENTENCES = 500  # about; chunks end at a document's end


class _Encode:
  """Sentences of whole documents -> window records; one featurizer (and
  tokenizer) per worker."""

  def __init__(self, featurizer_args):
    self.featurizer_args = featurizer_args
    self._featurizer = None

  def __call__(self, sentences):
    if self._featurizer is None:
      # pylint: disable-next=g-import-not-at-top
      from data_prep.ner.__main__ import featurizer
      self._featurizer = featurizer(*self.featurizer_args)
    max_seq_length = self.featurizer_args[2]
    return [window_record(window, max_seq_length)
            for window in self._featurizer.windows(sentences)]


def _document_chunks(sentences):
  chunks = [[]]
  for i, sentence in enumerate(sentences):
    if (len(chunks[-1]) >= _CHUNK_SENTENCES and
        sentence.document != sentences[i - 1].document):
      chunks.append([])
    chunks[-1].append(sentence)
  return chunks


def write_windows_beam(sentences, featurizer_args, output_file,
                       num_output_shards, runner, beam_args):
  """-> (number of windows, shard file names)."""
  counters, files = write_record_shards(
      _document_chunks(sentences), _Encode(featurizer_args), output_file,
      num_output_shards, runner, beam_args)
  return counters.get("records", 0), files
