"""data_prep.learn_vocab: the original's word split, Google's reserved ids,
a vocabulary that covers its corpus, Beam == single process, SentencePiece
models the tokenizer loads, and one-line errors."""

import os
import subprocess
import sys

import pytest

from bert_tf.io_utils import InputError
from bert_tf.tokenizers import loading
from bert_tf.tokenizers.tokenization import BasicTokenizer
from bert_tf.tokenizers.tokenization import FullTokenizer
from data_prep.learn_vocab import words
from data_prep.learn_vocab.sentencepiece import train_sentencepiece
from data_prep.learn_vocab.wordpiece import learn_wordpiece
from data_prep.pretraining.documents import plan_shards
from data_prep.pretraining.documents import Shard
from tests.conftest import FIXTURES
from tests.conftest import REPO

# Frequent words share stems and suffixes, so the learner has pieces to find.
_LINES = [
  "The runner was running and the runners ran.",
  "Jumping jumpers jumped; the jumper jumps!",
  "Walking walkers walked, the walker walks.",
  "Héllo WORLD, the world said 42 times.",
  "",
]


def _corpus(folder, copies=12):
  path = folder / "corpus.txt"
  path.write_text("\n".join(_LINES * copies) + "\n", encoding="utf-8")
  return path


def _run(*args):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  return subprocess.run(
    [sys.executable, "-m", "data_prep.learn_vocab"] + list(args),
    cwd=REPO,
    env=env,
    capture_output=True,
    text=True,
    timeout=300,
    check=False,
  )


def test_reserved_tokens_sit_at_the_ids_of_googles_uncased_vocab():
  google = (FIXTURES / "vocab_uncased.txt").read_text().splitlines()
  assert words.reserved_tokens(994) == google[:999]
  short = words.reserved_tokens(99)
  assert short[100:] == ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def test_words_are_split_as_the_original_basic_tokenizer(tmp_path):
  path = tmp_path / "t.txt"
  path.write_text("Héllo, WORLD!\n\n  hello 中文\n", encoding="utf-8")
  assert words.count_shard_words(Shard(str(path)), True) == {
    "hello": 2,
    ",": 1,
    "world": 1,
    "!": 1,
    "中": 1,
    "文": 1,
  }
  assert words.count_shard_words(Shard(str(path)), False) == {
    "Héllo": 1,
    ",": 1,
    "WORLD": 1,
    "!": 1,
    "hello": 1,
    "中": 1,
    "文": 1,
  }


def test_the_vocabulary_covers_its_corpus_with_whole_words(tmp_path):
  corpus = _corpus(tmp_path)
  counts = words.count_words([Shard(str(corpus))], True)
  vocab = learn_wordpiece(counts, 1100, 994)
  assert 1000 < len(vocab) <= 1100 and len(set(vocab)) == len(vocab)
  assert vocab[:999] == words.reserved_tokens(994)
  for char in set("".join(counts)):
    assert char in vocab and "##" + char in vocab
  # The most frequent word and the shared suffixes are pieces of their own.
  assert {"the", "##ing", "##er", "##ers", "##s"} <= set(vocab)
  vocab_file = tmp_path / "vocab.txt"
  vocab_file.write_text("".join(t + "\n" for t in vocab), encoding="utf-8")
  tokenizer = FullTokenizer(str(vocab_file), do_lower_case=True)
  for line in _LINES[:-1]:
    tokens = tokenizer.tokenize(line)
    assert "[UNK]" not in tokens
    assert " ".join(tokens).replace(" ##", "") == " ".join(
      BasicTokenizer(True).tokenize(line)
    )


def test_a_vocab_size_below_the_reserved_tokens_and_characters_is_refused(
  tmp_path,
):
  counts = words.count_words([Shard(str(_corpus(tmp_path)))], True)
  # 999 reserved + 24 characters twice + "the" (count 60, the learner's
  # highest threshold).
  with pytest.raises(
    InputError,
    match=r"--vocab_size=1040 is too small: "
    r"with the 999 reserved tokens .* has 1048 tokens",
  ):
    learn_wordpiece(counts, 1040, 994)
  with pytest.raises(InputError, match="no words"):
    learn_wordpiece({}, 1040, 994)


def test_beam_writes_the_single_process_vocabulary(tmp_path):
  # pylint: disable-next=g-import-not-at-top
  from data_prep.beam.learn_vocab import learn_vocab_beam

  corpus = _corpus(tmp_path)
  shards = plan_shards([str(corpus)], 1 << 20, min_shards=3)
  assert len(shards) == 3
  single = learn_wordpiece(
    words.count_words([Shard(str(corpus))], True), 1100, 994
  )
  out = tmp_path / "beam_vocab.txt"
  size = learn_vocab_beam(shards, str(out), True, 1100, 994, "DirectRunner", [])
  assert out.read_text(encoding="utf-8").splitlines() == single
  assert size == len(single)
  assert not list(tmp_path.glob("*.tmp*"))


@pytest.mark.process
def test_command_line_writes_the_vocabulary_and_fails_in_one_line(tmp_path):
  corpus = _corpus(tmp_path)
  result = _run(
    "--input_file=%s" % corpus,
    "--vocab_size=1100",
    "--output_file=%s" % (tmp_path / "a.txt"),
  )
  assert result.returncode == 0, result.stderr[-2000:]
  vocab = (tmp_path / "a.txt").read_text(encoding="utf-8").splitlines()
  assert vocab == learn_wordpiece(
    words.count_words([Shard(str(corpus))], True), 1100, 994
  )
  assert "vocab_size=%d (of at most 1100)" % len(vocab) in result.stdout

  bad = tmp_path / "bad.txt"
  bad.write_bytes(b"fine line\n\nbad \xff byte\n")
  not_utf8 = _run(
    "--input_file=%s" % bad, "--output_file=%s" % (tmp_path / "bad_vocab.txt")
  )
  spm_beam = _run(
    "--input_file=%s" % corpus,
    "--model_type=sentencepiece",
    "--runner=DirectRunner",
    "--output_file=%s" % (tmp_path / "x.model"),
  )
  for result, line in [
    (not_utf8, "ERROR: %s:3: not UTF-8" % bad),
    (spm_beam, "ERROR: --model_type=sentencepiece trains in one process"),
  ]:
    assert result.returncode == 1
    errors = [l for l in result.stderr.splitlines() if l.startswith("ERROR")]
    assert len(errors) == 1 and errors[0].startswith(line), result.stderr
    assert "Traceback" not in result.stderr
  assert sorted(p.name for p in tmp_path.iterdir()) == [
    "a.txt",
    "bad.txt",
    "corpus.txt",
  ]


def test_sentencepiece_model_loads_as_spm_model_file(tmp_path):
  lines = [l for l in _LINES * 12 if l]
  model = train_sentencepiece(lines, 40, do_lower_case=True)
  assert train_sentencepiece(lines, 40, do_lower_case=True) == model
  path = tmp_path / "spm.model"
  path.write_bytes(model)
  tokenizer = loading.load_tokenizer(
    None, True, str(path), ("[CLS]", "[SEP]", "[MASK]")
  )
  assert tokenizer.convert_ids_to_tokens(range(5)) == [
    "<pad>",
    "<unk>",
    "[CLS]",
    "[SEP]",
    "[MASK]",
  ]
  pieces = tokenizer.tokenize("The walker jumped, HÉLLO world.")
  assert "<unk>" not in pieces
  assert "".join(pieces).replace("\u2581", " ").strip() == (
    "the walker jumped, hello world."
  )


@pytest.mark.parametrize(
  "lines,says",
  [
    (["", "  "], "it is empty or holds only blank lines"),
    (["x" * 4193, "y" * 5000], "its 2 non-empty lines are all longer than"),
  ],
)
def test_sentencepiece_without_a_usable_line_names_the_corpus(lines, says):
  with pytest.raises(InputError) as e:
    train_sentencepiece(lines, 40, True, "--input_file=c.txt")
  assert str(e.value).startswith("--input_file=c.txt: no text to learn from")
  assert says in str(e.value)
  # One line of the longest length SentencePiece keeps is enough to start.
  with pytest.raises(InputError, match="c.txt: SentencePiece training failed"):
    train_sentencepiece(["x" * 4192], 40, True, "--input_file=c.txt")
