"""Class 4 (vocabulary and config consistency): found at start-up, not at the
first unknown word or mid-training; likely mismatches are warned about."""

import gzip

import pytest

from tests.conftest import FIXTURES
from tests.conftest import REPO
from tests.helpers.checkpoints import CKPT
from tests.helpers.checkpoints import VOCAB
from tests.helpers.checkpoints import write_config
from tests.helpers.cli import assert_one_error
from tests.helpers.cli import run_cases
from tests.helpers.scripts import classifier_args
from tests.helpers.scripts import GLUE

pytestmark = pytest.mark.process  # starts programs

SAMPLE_TEXT = REPO / "examples" / "data" / "sample_text.txt"
SQUAD = FIXTURES / "squad"


def _vocab(path, lines):
  path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
  return str(path)


def _extract(tmp_path, input_file, vocab=VOCAB, **config):
  return [
    "--input_file=%s" % input_file,
    "--vocab_file=%s" % vocab,
    "--output_file=%s" % (tmp_path / "features.jsonl"),
    "--init_checkpoint=" + CKPT,
    "--bert_config_file=%s"
    % write_config(tmp_path / ("c_%s.json" % "_".join(config)), **config),
  ]


def test_vocabulary_and_config_mismatches_stop_at_start_up(tmp_path):
  words = open(VOCAB, encoding="utf-8").read().splitlines()
  no_unk = _vocab(tmp_path / "no_unk.txt", [w for w in words if w != "[UNK]"])
  pairs = tmp_path / "pairs.txt"
  pairs.write_text("the cat sat ||| on the mat\n")
  single = tmp_path / "single.txt"
  single.write_text("the cat sat\n")
  out = tmp_path / "out"
  small = write_config(tmp_path / "small.json", vocab_size=100)
  one_type = write_config(tmp_path / "one_type.json", type_vocab_size=1)
  squad_json = tmp_path / "squad.json"  # read before the vocab checks
  squad_json.write_bytes(
    gzip.decompress((SQUAD / "small_v1_first_answer.json.gz").read_bytes())
  )
  squad = [
    "--vocab_file=" + VOCAB,
    "--do_train",
    "--output_dir=%s" % out,
    "--train_file=%s" % squad_json,
    "--max_seq_length=64",
    "--doc_stride=32",
    "--max_query_length=16",
  ]
  cases = {
    "no_unk_extract": (
      "extract_features",
      _extract(tmp_path, single, vocab=no_unk),
      [no_unk, "[UNK]"],
    ),
    "no_unk_classifier": (
      "run_classifier",
      classifier_args(out) + ["--do_train", "--vocab_file=" + no_unk],
      [no_unk, "[UNK]"],
    ),
    "no_unk_corpus": (
      "data_prep.create_pretraining_data",
      [
        "--input_file=%s" % SAMPLE_TEXT,
        "--vocab_file=" + no_unk,
        "--output_file=%s" % (tmp_path / "pt"),
      ],
      [no_unk, "[UNK]"],
    ),
    "vocab_over_vocab_size_classifier": (
      "run_classifier",
      classifier_args(out, config=small) + ["--do_train"],
      [VOCAB, "vocab_size 100"],
    ),
    "vocab_over_vocab_size_extract": (
      "extract_features",
      _extract(tmp_path, single, vocab_size=100),
      [VOCAB, "vocab_size 100"],
    ),
    "vocab_over_vocab_size_squad": (
      "run_squad",
      squad + ["--bert_config_file=" + small],
      [VOCAB, "vocab_size 100"],
    ),
    "one_type_pairs_classifier": (
      "run_classifier",
      classifier_args(out, config=one_type) + ["--do_train"],
      ["--task_name=mrpc", "type_vocab_size is 1"],
    ),
    "one_type_squad": (
      "run_squad",
      squad + ["--bert_config_file=" + one_type],
      ["SQuAD", "type_vocab_size is 1"],
    ),
    "one_type_pairs_extract": (
      "extract_features",
      _extract(tmp_path, pairs, type_vocab_size=1),
      [str(pairs), "type_vocab_size is 1"],
    ),
    "vocab_over_vocab_size_ner": (
      "run_ner",
      [
        "--data_dir=%s" % (FIXTURES / "ner"),
        "--do_train",
        "--vocab_file=" + VOCAB,
        "--bert_config_file=" + small,
        "--output_dir=%s" % out,
      ],
      [VOCAB, "vocab_size 100"],
    ),
    "one_type_multiple_choice": (
      "run_multiple_choice",
      [
        "--data_dir=%s" % (FIXTURES / "swag"),
        "--do_train",
        "--vocab_file=" + VOCAB,
        "--bert_config_file=" + one_type,
        "--output_dir=%s" % out,
      ],
      ["multiple choice", "type_vocab_size is 1"],
    ),
    "one_type_pretraining": (
      "run_pretraining",
      [
        "--input_file=%s" % tmp_path,
        "--output_dir=%s" % out,
        "--bert_config_file=" + one_type,
        "--do_train",
      ],
      ["pre-training", "type_vocab_size is 1"],
    ),
  }
  pairs.write_text("the cat sat ||| on the mat\n")
  outcomes = run_cases([(e, a) for e, a, _ in cases.values()])
  for (name, (_, _, culprits)), outcome in zip(cases.items(), outcomes):
    assert_one_error(outcome, *culprits, name=name)
  assert not (tmp_path / "features.jsonl").exists()


def test_single_sentences_train_with_one_token_type(tmp_path):
  config = write_config(tmp_path / "one_type.json", type_vocab_size=1)
  ((code, stderr),) = run_cases(
    [
      (
        "run_classifier",
        classifier_args(
          tmp_path / "out", data_dir=GLUE / "CoLA", task="CoLA", config=config
        )
        + ["--do_train"],
      )
    ]
  )
  assert code == 0, stderr[-2000:]


def test_case_and_unknown_word_warnings(tmp_path):
  words = open(VOCAB, encoding="utf-8").read().splitlines()
  cased = _vocab(tmp_path / "cased.txt", words + ["The"])
  tiny = _vocab(
    tmp_path / "tiny.txt",
    ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "."],
  )
  corpus = [
    "--input_file=%s" % SAMPLE_TEXT,
    "--dupe_factor=1",
    "--output_file=%s" % (tmp_path / "pt.tfrecord"),
  ]
  outcomes = run_cases(
    [
      (
        "data_prep.create_pretraining_data",
        corpus + ["--vocab_file=" + VOCAB, "--do_lower_case=False"],
      ),
      (
        "data_prep.create_pretraining_data",
        corpus + ["--vocab_file=" + cased, "--do_lower_case=False"],
      ),
      ("data_prep.create_pretraining_data", corpus + ["--vocab_file=" + tiny]),
      ("data_prep.create_pretraining_data", corpus + ["--vocab_file=" + VOCAB]),
    ]
  )
  for code, stderr in outcomes:
    assert code == 0, stderr[-2000:]
  case_warning, unk_warning = "no upper-case token", "are [UNK] with"
  assert case_warning in outcomes[0][1] and VOCAB in outcomes[0][1]
  assert case_warning not in outcomes[1][1]
  assert unk_warning in outcomes[2][1] and tiny in outcomes[2][1]
  assert case_warning not in outcomes[3][1]
  assert unk_warning not in outcomes[3][1]


def test_every_command_that_tokenizes_for_a_model_checks_the_vocab(tmp_path):
  # The training scripts' checks also run in the export (a vocabulary larger
  # than the model's made every request fail); a vocabulary under half the
  # config's vocab_size (most words [UNK]) warns wherever a config is read.
  words = open(VOCAB, encoding="utf-8").read().splitlines()
  no_cls = _vocab(tmp_path / "no_cls.txt", [w for w in words if w != "[CLS]"])
  small_vocab = _vocab(tmp_path / "small.txt", words[:1000])
  small = write_config(tmp_path / "small.json", vocab_size=100)
  one_type = write_config(tmp_path / "one_type.json", type_vocab_size=1)
  single = tmp_path / "single.txt"
  single.write_text("the cat sat\n")

  def export(name, vocab, config=None):
    return [
      "--task=encoder",
      "--checkpoint=" + CKPT,
      "--vocab_file=" + vocab,
      "--max_seq_length=16",
      "--export_dir=%s" % (tmp_path / name),
    ] + (["--bert_config_file=" + config] if config else [])

  outcomes = run_cases(
    [
      ("bert_tf.export_saved_model", export("big", VOCAB, small)),
      ("bert_tf.export_saved_model", export("no_cls", no_cls)),
      ("bert_tf.export_saved_model", export("small", small_vocab)),
      (
        "extract_features",
        _extract(tmp_path, single, vocab=small_vocab) + ["--layers=-1"],
      ),
      # Reaches the vocab check, then stops at the pairs check.
      (
        "run_classifier",
        classifier_args(tmp_path / "run", config=one_type)
        + ["--do_train", "--vocab_file=" + small_vocab],
      ),
    ]
  )
  assert_one_error(outcomes[0], VOCAB, "vocab_size 100")
  assert_one_error(outcomes[1], no_cls, "no [CLS]")
  warning = "%s: 1000 tokens for a model of vocab_size 3000" % small_vocab
  for code, stderr in outcomes[2:]:
    assert warning in stderr, stderr[-2000:]
  assert outcomes[2][0] == 0 and outcomes[3][0] == 0
  assert_one_error(outcomes[4], "type_vocab_size is 1")
  assert not (tmp_path / "big").exists() and (tmp_path / "small").is_dir()
