"""The pieces the Beam drivers share, without running Beam: `PerWorker`
builds its state once, after pickling (as a worker receives it); chunks and
their shards keep the input order."""

import pickle

from bert_tf.tokenizers import tokenization
from data_prep.beam.pipeline import PerWorker
from data_prep.beam.records import chunked
from data_prep.beam.records import shard_of
from data_prep.ner import conll
from data_prep.ner.features import Featurizer
from data_prep.ner.features import new_featurizer
from tests.conftest import FIXTURES

VOCAB = str(FIXTURES / "vocab_uncased.txt")


def _count_windows(featurizer, sentences):
  return len(featurizer.windows(sentences))


def test_per_worker_state_is_built_once_after_pickling():
  built = []

  def make(*args):  # a closure: PerWorker pickles its args, not this test
    built.append(args)
    return "state"

  step = PerWorker(lambda state, element: (state, element), make, 1, "a")
  assert built == []  # nothing costly at pipeline-construction time
  assert [step(i) for i in range(3)] == [
    ("state", 0),
    ("state", 1),
    ("state", 2),
  ]
  assert built == [(1, "a")]


def test_ner_featurizer_travels_as_settings(tmp_path):
  path = tmp_path / "x.conll"
  path.write_text(
    "EU B-ORG\nrejects O\nGerman B-MISC\ncall O\n\n"
    "Peter B-PER\nBlackburn I-PER\n\n"
  )
  sentences = conll.read_conll(str(path))
  labels = conll.label_list(sentences)
  step = pickle.loads(
    pickle.dumps(
      PerWorker(
        _count_windows, new_featurizer, (VOCAB, True, None), labels, 16, False
      )
    )
  )
  direct = Featurizer(
    tokenization.FullTokenizer(VOCAB, True), labels, 16, False
  )
  assert step(sentences) == len(direct.windows(sentences)) == 2


def test_chunks_and_shards_keep_the_input_order():
  assert chunked(list(range(7)), 3) == [[0, 1, 2], [3, 4, 5], [6]]
  assert chunked([], 3) == []
  # 5 chunks over 2 shards: the first three, then the last two.
  assert [shard_of(i, 5, 2) for i in range(5)] == [0, 0, 0, 1, 1]
  assert [shard_of(i, 4, 4) for i in range(4)] == [0, 1, 2, 3]
