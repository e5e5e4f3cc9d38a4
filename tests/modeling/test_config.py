"""BertConfig: original keys/defaults, unknown keys kept, one-line errors."""

import json

import pytest

from bert_tf.io_utils import InputError
from bert_tf.modeling.activations import get_activation
from bert_tf.modeling.bert_config import BertConfig


def test_defaults_are_the_originals():
  c = BertConfig(vocab_size=99)
  assert (
    c.hidden_size,
    c.num_hidden_layers,
    c.num_attention_heads,
    c.intermediate_size,
    c.hidden_act,
    c.hidden_dropout_prob,
    c.attention_probs_dropout_prob,
    c.max_position_embeddings,
    c.type_vocab_size,
    c.initializer_range,
  ) == (768, 12, 12, 3072, "gelu", 0.1, 0.1, 512, 16, 0.02)


def test_unknown_keys_are_kept_and_written_back(tmp_path):
  data = {
    "vocab_size": 119547,
    "directionality": "bidi",
    "pooler_fc_size": 768,
    "pooler_type": "first_token_transform",
    "type_vocab_size": 2,
  }
  path = tmp_path / "bert_config.json"
  path.write_text(json.dumps(data))
  c = BertConfig.from_json_file(str(path))
  assert c.directionality == "bidi" and c.pooler_fc_size == 768
  assert c.type_vocab_size == 2 and c.hidden_size == 768
  back = json.loads(c.to_json_string())
  assert back["pooler_type"] == "first_token_transform"
  assert BertConfig.from_dict(back) == c
  # Original format: indent 2, sorted keys, trailing newline.
  assert c.to_json_string() == json.dumps(back, indent=2, sort_keys=True) + "\n"


@pytest.mark.parametrize("content", [None, "{not json", "[1, 2]", "{}"])
def test_bad_config_file_names_the_file(tmp_path, content):
  path = tmp_path / "cfg.json"
  if content is not None:
    path.write_text(content)
  with pytest.raises(InputError, match="cfg.json") as e:
    BertConfig.from_json_file(str(path))
  assert "\n" not in str(e.value)


def test_max_seq_length_check():
  c = BertConfig(vocab_size=10, max_position_embeddings=64)
  c.check_max_seq_length(64)
  with pytest.raises(InputError, match="max_seq_length 65.*64"):
    c.check_max_seq_length(65)


def test_hidden_act_values():
  for name in ("gelu", "gelu_exact", "relu", "tanh", "linear", ""):
    get_activation(name)
  assert get_activation("linear") is None
  with pytest.raises(InputError, match="swish"):
    get_activation("swish")
