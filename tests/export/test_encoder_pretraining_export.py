"""Encoder and pre-training SavedModels (served without bert_tf) vs the
Keras models run on the Python tokenizer's ids (tiny original checkpoint
ckpt_a with every head)."""

import numpy as np
import pytest

from bert_tf.checkpoints import checkpoint_io
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.modeling.bert_encoder import BertEncoder
from bert_tf.tasks.pretraining import PretrainingModel
from bert_tf.tokenizers import tokenization
from tests.conftest import FIXTURES
from tests.export.standalone import export
from tests.export.standalone import serve
from tests.helpers.checkpoints import ckpt_prefix
from tests.helpers.export_cases import ARGS
from tests.helpers.export_cases import PAIRS
from tests.helpers.export_cases import VOCAB

pytestmark = pytest.mark.process  # starts programs

CONFIG = BertConfig.from_json_file(
  str(FIXTURES / "encoder" / "ckpt_a" / "bert_config.json")
)


def _features(pairs, seq_length, mask_literal=False):
  """The original's [CLS] a [SEP] b [SEP] packing (no truncation needed)."""
  tokenizer = tokenization.FullTokenizer(VOCAB, do_lower_case=True)

  def ids(text):
    if not mask_literal:
      return tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text))
    pieces = [ids_of(p) for p in text.split("[MASK]")]
    out = pieces[0]
    for piece in pieces[1:]:
      out = out + [tokenizer.vocab["[MASK]"]] + piece
    return out

  ids_of = lambda t: tokenizer.convert_tokens_to_ids(tokenizer.tokenize(t))
  rows = {"input_ids": [], "input_mask": [], "segment_ids": []}
  for a, b in pairs:
    a_ids, b_ids = ids(a), ids(b)
    cls, sep = tokenizer.vocab["[CLS]"], tokenizer.vocab["[SEP]"]
    tokens = [cls] + a_ids + [sep] + (b_ids + [sep] if b_ids else [])
    segments = [0] * (len(a_ids) + 2) + (
      [1] * (len(b_ids) + 1) if b_ids else []
    )
    assert len(tokens) <= seq_length
    pad = [0] * (seq_length - len(tokens))
    rows["input_ids"].append(tokens + pad)
    rows["input_mask"].append([1] * len(tokens) + pad)
    rows["segment_ids"].append(segments + pad)
  return {k: np.array(v, np.int32) for k, v in rows.items()}


def _load(model):
  report = checkpoint_io.init_from_checkpoint(
    ckpt_prefix("ckpt_a"), model.tf1_variables()
  )
  assert not report.not_in_checkpoint
  return model


def test_encoder_outputs(tmp_path):
  export_dir = export(tmp_path, "encoder", "--task=encoder", *ARGS)
  (answer,) = serve(
    export_dir,
    [{"text_a": [a for a, _ in PAIRS], "text_b": [b for _, b in PAIRS]}],
  )
  features = _features(PAIRS, 40)
  want = _load(BertEncoder(CONFIG))(features)
  np.testing.assert_array_equal(answer["input_mask"], features["input_mask"])
  expected = {
    "pooled_output": want["pooled_output"],
    "sequence_output": want["sequence_output"],
    "layer_0": want["encoder_outputs"][0],
    "layer_1": want["encoder_outputs"][1],
  }
  for key, value in expected.items():
    np.testing.assert_allclose(answer[key], value, atol=1e-5, err_msg=key)


# Slow (~12 s on 2 cores); `make test-all` runs it.
@pytest.mark.slow
def test_masked_lm_top_k(tmp_path):
  export_dir = export(
    tmp_path,
    "mlm",
    "--task=pretraining",
    "--top_k=3",
    "--max_predictions_per_seq=4",
    *ARGS,
  )
  (answer,) = serve(
    export_dir,
    [{"text_a": [a for a, _ in PAIRS], "text_b": [b for _, b in PAIRS]}],
  )
  features = _features(PAIRS, 40, mask_literal=True)
  mask_id = tokenization.load_vocab(VOCAB)["[MASK]"]
  positions = [
    [i for i, t in enumerate(row) if t == mask_id][:4]
    for row in features["input_ids"]
  ]
  assert [len(p) for p in positions] == [0, 0, 3, 2]
  padded = np.array([p + [0] * (4 - len(p)) for p in positions], np.int32)
  model = _load(PretrainingModel(CONFIG))
  out = model(dict(features, masked_lm_positions=padded))
  log_probs = out["masked_lm_log_probs"].numpy()
  inv = {i: t for t, i in tokenization.load_vocab(VOCAB).items()}
  for row, row_positions in enumerate(positions):
    assert answer["mask_positions"][row] == row_positions + [-1] * (
      4 - len(row_positions)
    )
    for slot in range(4):
      if slot >= len(row_positions):
        assert answer["top_k_ids"][row][slot] == [-1] * 3
        continue
      top = np.argsort(-log_probs[row, slot], kind="stable")[:3]
      assert answer["top_k_ids"][row][slot] == top.tolist()
      assert answer["top_k_tokens"][row][slot] == [inv[i] for i in top]
      np.testing.assert_allclose(
        answer["top_k_log_probs"][row][slot],
        log_probs[row, slot, top],
        atol=1e-5,
      )
  np.testing.assert_allclose(
    answer["next_sentence_probabilities"],
    np.exp(out["next_sentence_log_probs"]),
    atol=1e-5,
  )
