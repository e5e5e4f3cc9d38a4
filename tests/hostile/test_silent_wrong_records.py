"""Class 3 (silently wrong results with exit 0), records: SQuAD logits
re-scored with other windows, and training records that do not fit the run
(sequence length, labels, features), stop with one line."""

import gzip
import json

import pytest

from bert_tf.tokenizers import tokenization
from data_prep.multiple_choice import examples as mc_examples
from data_prep.multiple_choice import features as mc_features
from data_prep.ner import conll
from data_prep.ner.features import Featurizer
from data_prep.ner.records import write_windows
from data_prep.squad import raw_results
from data_prep.squad.example import read_squad_examples
from data_prep.squad.features import convert_examples_to_features
from tests.conftest import FIXTURES
from tests.helpers.checkpoints import VOCAB
from tests.helpers.checkpoints import write_config
from tests.helpers.cli import assert_one_error
from tests.helpers.cli import run_cases
from tests.helpers.scripts import classifier_args

pytestmark = pytest.mark.process  # starts programs


def _squad_slice(tmp_path):
  """Three questions of the SQuAD fixture, contexts long enough for several
  64-token windows."""
  data = json.loads(
    gzip.decompress((FIXTURES / "squad" / "small_v1.json.gz").read_bytes())
  )
  paragraph = data["data"][0]["paragraphs"][0]
  paragraph["qas"] = paragraph["qas"][:3]
  data["data"] = [{"title": "t", "paragraphs": [paragraph]}]
  path = tmp_path / "dev.json"
  path.write_text(json.dumps(data))
  return path


def test_squad_logits_are_not_rescored_with_other_windows(tmp_path):
  vocab = str(FIXTURES / "vocab_uncased.txt")
  dev = _squad_slice(tmp_path)
  settings = {"max_seq_length": 64, "doc_stride": 32, "max_query_length": 16}
  features = []
  convert_examples_to_features(
    read_squad_examples(str(dev), False, False),
    tokenization.FullTokenizer(vocab, True),
    settings["max_seq_length"],
    settings["doc_stride"],
    settings["max_query_length"],
    False,
    features.append,
  )
  assert len(features) > 3  # several windows per context
  results = [
    raw_results.RawResult(f.unique_id, [0.0] * 64, [0.0] * 64) for f in features
  ]
  recorded = tmp_path / "run" / "raw_results.jsonl"
  raw_results.write_raw_results(str(recorded), results, settings)
  bare = tmp_path / "bare" / "raw_results.jsonl"  # no settings file
  raw_results.write_raw_results(str(bare), results)
  common = [
    "--predict_file=%s" % dev,
    "--vocab_file=" + vocab,
    "--max_seq_length=64",
    "--output_dir=%s" % (tmp_path / "out"),
  ]
  outcomes = run_cases(
    [
      (
        "data_prep.squad_predictions",
        common
        + [
          "--raw_results_file=%s" % recorded,
          "--doc_stride=32",
          "--max_query_length=16",
        ],
      ),
      (
        "data_prep.squad_predictions",
        common
        + [
          "--raw_results_file=%s" % recorded,
          "--doc_stride=16",
          "--max_query_length=16",
        ],
      ),
      (
        "data_prep.squad_predictions",
        common
        + [
          "--raw_results_file=%s" % recorded,
          "--doc_stride=32",
          "--max_query_length=24",
        ],
      ),
      (
        "data_prep.squad_predictions",
        common
        + [
          "--raw_results_file=%s" % bare,
          "--doc_stride=16",
          "--max_query_length=16",
        ],
      ),
    ]
  )
  assert outcomes[0][0] == 0, outcomes[0][1][-2000:]
  assert_one_error(outcomes[1], str(recorded), "--doc_stride=32, not 16")
  assert_one_error(outcomes[2], str(recorded), "--max_query_length=16, not 24")
  assert_one_error(outcomes[3], str(bare), "%d results" % len(features))


def test_train_records_that_do_not_fit_the_run(tmp_path):
  """--train_records written with another label list, or read with another
  --max_seq_length (4 choices x 32 ids are also 8 x 16), would train a
  wrong model: refused, naming the file (and record)."""
  tokenizer = tokenization.FullTokenizer(VOCAB, True)
  sentences = conll.read_conll(str(FIXTURES / "ner" / "train.txt"))
  ner = tmp_path / "ner.tf_record"
  write_windows(
    str(ner),
    Featurizer(tokenizer, conll.label_list(sentences), 24).windows(sentences),
    24,
  )
  mc = tmp_path / "mc.tf_record"
  mc_features.write_records(
    mc_examples.read_examples(str(FIXTURES / "swag" / "train.csv"), "train"),
    32,
    tokenizer,
    str(mc),
  )
  common = [
    "--do_train",
    "--vocab_file=" + VOCAB,
    "--bert_config_file=%s" % write_config(tmp_path / "c.json"),
    "--output_dir=%s" % (tmp_path / "out"),
  ]
  cases = {
    "fewer_labels": (
      "run_ner",
      common
      + [
        "--train_records=%s" % ner,
        "--labels=O,B-PER,I-PER",
        "--max_seq_length=24",
      ],
      [
        "ERROR: --train_records: %s: record " % ner,
        "outside label_ids in [0, 3)",
      ],
    ),
    "no_labels": (
      "run_ner",
      common + ["--train_records=%s" % ner, "--max_seq_length=24"],
      ["--train_records needs --labels"],
    ),
    "other_seq_length": (
      "run_multiple_choice",
      common + ["--train_records=%s" % mc, "--max_seq_length=16"],
      [
        "ERROR: --train_records=%s: input_ids are not choices of "
        "--max_seq_length=16, each starting with [CLS]" % mc
      ],
    ),
    "without_do_train": (
      "run_classifier",
      classifier_args(tmp_path / "out")
      + ["--do_eval", "--train_records=%s" % mc],
      ["--train_records needs --do_train"],
    ),
  }
  outcomes = run_cases([(e, a) for e, a, _ in cases.values()])
  for (name, (_, _, culprits)), outcome in zip(cases.items(), outcomes):
    assert_one_error(outcome, *culprits, name=name)
  assert not (tmp_path / "out").exists()
