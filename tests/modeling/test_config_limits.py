"""BertConfig refuses what a 24 GB machine cannot build, and configs that
contradict the arrays they describe, before any tensor exists."""

import pytest

from bert_tf.io_utils import InputError
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.modeling.bert_config import MAX_PARAMETERS

_BASE = dict(type_vocab_size=2)
_LARGE = dict(
  type_vocab_size=2,
  hidden_size=1024,
  num_hidden_layers=24,
  num_attention_heads=16,
  intermediate_size=4096,
)


@pytest.mark.parametrize(
  "sizes,encoder",
  # HuggingFace's published BertModel sizes (bert-base/large-uncased).
  [(_BASE, 109_482_240), (_LARGE, 335_141_888)],
)
def test_parameter_count_is_the_published_one(sizes, encoder):
  config = BertConfig(30522, **sizes)
  h = config.hidden_size
  masked_lm = h * h + h + 2 * h + 30522  # transform, LayerNorm, bias
  assert config.num_parameters() == encoder + masked_lm


@pytest.mark.parametrize(
  "key,value,shown",
  [
    ("hidden_size", 10**9, "[1, 16384]"),
    ("num_hidden_layers", 10**6, "[1, 256]"),
    ("intermediate_size", 10**7, "[1, 65536]"),
    ("max_position_embeddings", 10**8, "[1, 65536]"),
    ("type_vocab_size", 10**5, "[1, 1024]"),
    ("initializer_range", 1e30, "(0, 1000.0]"),
  ],
)
def test_a_size_no_machine_builds_is_refused(key, value, shown):
  with pytest.raises(InputError) as e:
    BertConfig(30522, **{key: value})
  assert str(e.value) == "key %r must be in %s, got %r" % (key, shown, value)


def test_a_huge_vocabulary_is_refused():
  with pytest.raises(InputError, match=r"'vocab_size' must be in \[1, 4194304"):
    BertConfig(10**12)


def test_sizes_each_allowed_but_too_many_together_are_refused():
  # 16384 x (30522 + 512 + 16) embeddings + 12 layers of 4 H^2 + 2 H I.
  with pytest.raises(InputError) as e:
    BertConfig(30522, hidden_size=16384, num_attention_heads=16)
  assert str(e.value).startswith("an encoder of 1.51e+10 parameters")
  assert "more than the 1.5e+09 a 24 GB machine can train" in str(e.value)
  assert MAX_PARAMETERS == 1_500_000_000


def test_the_source_file_starts_the_message():
  with pytest.raises(InputError) as e:
    BertConfig.from_dict({"vocab_size": 3, "hidden_size": "abc"}, "run.json")
  assert (
    str(e.value) == "run.json: key 'hidden_size' must be an integer, got 'abc'"
  )
  with pytest.raises(InputError, match="run.json: a BERT config must be"):
    BertConfig.from_dict([1], "run.json")


_SHAPES = {
  "bert/embeddings/word_embeddings": (3000, 32),
  "bert/embeddings/position_embeddings": (512, 32),
  "bert/embeddings/token_type_embeddings": (2, 32),
  "bert/encoder/layer_0/intermediate/dense/kernel": (32, 64),
  "bert/encoder/layer_1/intermediate/dense/kernel": (32, 64),
  "bert/pooler/dense/kernel": (32, 32),
}
_FITS = dict(
  hidden_size=32,
  num_hidden_layers=2,
  num_attention_heads=2,
  intermediate_size=64,
  type_vocab_size=2,
)


@pytest.mark.parametrize(
  "change,message",
  [
    (
      dict(hidden_size=64),
      "m: bert/embeddings/word_embeddings is [3000, 32], but the config "
      "makes it [3000, 64] (is it this model's config?)",
    ),
    (
      dict(intermediate_size=128),
      "m: bert/encoder/layer_0/intermediate/dense/kernel is [32, 64], but the "
      "config makes it [32, 128] (is it this model's config?)",
    ),
    (
      dict(num_hidden_layers=3),
      "m: 2 encoder layers, but the config's num_hidden_layers is 3",
    ),
  ],
)
def test_a_config_contradicting_its_arrays_is_refused(change, message):
  BertConfig(3000, **_FITS).check_arrays(_SHAPES, "m", every_layer=True)
  with pytest.raises(InputError) as e:
    BertConfig(3000, **dict(_FITS, **change)).check_arrays(_SHAPES, "m")
  assert str(e.value) == message


def test_fewer_layers_than_the_checkpoint_load_as_the_original_allows():
  BertConfig(3000, **dict(_FITS, num_hidden_layers=1)).check_arrays(
    _SHAPES, "m"
  )
  with pytest.raises(InputError, match="2 encoder layers, but .* is 1"):
    BertConfig(3000, **dict(_FITS, num_hidden_layers=1)).check_arrays(
      _SHAPES, "m", every_layer=True
    )
