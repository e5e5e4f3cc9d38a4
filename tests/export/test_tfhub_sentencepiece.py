"""SentencePiece in the TF Hub format: `--task=tfhub_preprocess` /
`tfhub_encoder` with `--spm_model_file`, served where only tensorflow +
tensorflow_text load, against the Python SentencePiece tokenizer on the
golden texts; `tokenize_with_offsets` of both preprocessors; and
`convert_checkpoint --input_format=tfhub` on SentencePiece encoders (ours,
and one laid out as Model Garden's)."""

import json
import re

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.checkpoints import tfhub_import
from bert_tf.export import get_exporter
from bert_tf.io_utils import InputError
from bert_tf.tokenizers.offsets import tokenize_with_offsets
from bert_tf.tokenizers.sentencepiece_tokenizer import SentencePieceTokenizer
from bert_tf.tokenizers.tokenization import FullTokenizer
from tests.conftest import REPO
from tests.export import standalone
from tests.helpers import offset_texts
from tests.helpers.checkpoints import convert_tfhub
from tests.helpers.offset_texts import char_spans

pytestmark = pytest.mark.process  # exports, conversions, serving processes

GOLDEN = REPO.parent / "shared" / "golden"
TEXTS = json.loads((GOLDEN / "tfhub" / "texts.json").read_text())
CKPT_A = GOLDEN / "encoder" / "ckpt_a" / "bert_model.ckpt"
VOCAB = GOLDEN / "encoder" / "vocab_small.txt"
SEQ = TEXTS["seq_length"]

# Our SentencePiece pair where bert_tf cannot be imported.
_CHILD = (
  standalone.WITHOUT_BERT_TF
  + r"""
import json
import tensorflow as tf
import tensorflow_text  # the preprocessor's ops
pre, enc = (tf.saved_model.load(p) for p in sys.argv[1:3])
texts = json.loads(sys.argv[3])
a, b = tf.constant(texts["text_a"]), tf.constant(texts["text_b"])
as_lists = lambda d: {k: v.numpy().tolist() for k, v in d.items()}
tokens, starts, limits = pre.tokenize_with_offsets(tf.constant(texts["more"]))
single = pre(a)
print(json.dumps({
  "single": as_lists(single),
  "pair": as_lists(pre.bert_pack_inputs([pre.tokenize(a), pre.tokenize(b)],
                                        seq_length=texts["seq_length"])),
  "tokenize": pre.tokenize(tf.constant(texts["more"])).to_list(),
  "tokens": tokens.to_list(), "starts": starts.to_list(),
  "limits": limits.to_list(),
  "specials": as_lists(pre.tokenize.get_special_tokens_dict()),
  "offsets_specials": as_lists(
      pre.tokenize_with_offsets.get_special_tokens_dict()),
  "pooled": enc(single, training=False)["pooled_output"].numpy().tolist(),
}))
"""
)


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
  return offset_texts.sentencepiece_model(tmp_path_factory.mktemp("spm"))


@pytest.fixture(scope="module")
def pair(model_file, tmp_path_factory):
  """(preprocessor, encoder) folders written by the command."""
  tmp = tmp_path_factory.mktemp("pair")
  spm = "--spm_model_file=%s" % model_file
  pre = standalone.export(
    tmp, "pre", "--task=tfhub_preprocess", spm, "--max_seq_length=%d" % SEQ
  )
  enc = standalone.export(
    tmp, "enc", "--task=tfhub_encoder", "--checkpoint=%s" % CKPT_A, spm
  )
  return pre, enc


def _packed(segments, seq_length, cls_id, sep_id):
  """[CLS] a [SEP] (b [SEP]), trimmed one id at a time from each segment in
  turn while too long, and padded with 0 (written out by hand)."""
  budget = seq_length - len(segments) - 1
  taken = [0] * len(segments)
  while sum(taken) < budget and any(
    t < len(s) for t, s in zip(taken, segments)
  ):
    for i, segment in enumerate(segments):
      if taken[i] < len(segment) and sum(taken) < budget:
        taken[i] += 1
  ids, types = [cls_id], [0]
  for i, (segment, n) in enumerate(zip(segments, taken)):
    ids += segment[:n] + [sep_id]
    types += [i] * (n + 1)
  pad = [0] * (seq_length - len(ids))
  return ids + pad, [1] * len(ids) + pad, types + pad


@pytest.mark.slow  # two exports and a serving process: ~1 min
def test_sentencepiece_pair_equals_the_python_tokenizer(
  pair, model_file, tmp_path
):
  pre, enc = pair
  texts = dict(TEXTS, more=offset_texts.TEXTS)
  got = standalone.run_child(tmp_path, _CHILD, pre, enc, json.dumps(texts))
  python = SentencePieceTokenizer(model_file, do_lower_case=True)
  ids = lambda t: python.convert_tokens_to_ids(python.tokenize(t))  # noqa: E731
  cls_id, sep_id = python.vocab["[CLS]"], python.vocab["[SEP]"]
  for tag, segments in (
    ("single", [[ids(a)] for a in TEXTS["text_a"]]),
    (
      "pair",
      [[ids(a), ids(b)] for a, b in zip(TEXTS["text_a"], TEXTS["text_b"])],
    ),
  ):
    expected = [_packed(s, SEQ, cls_id, sep_id) for s in segments]
    for k, key in enumerate(("input_word_ids", "input_mask", "input_type_ids")):
      assert got[tag][key] == [e[k] for e in expected], (tag, key)
  assert len(got["single"]["input_word_ids"][5]) == SEQ  # the long text
  # tokenize and tokenize_with_offsets: the Python tokenizer's pieces and
  # their characters, on accented, CJK and emoji text.
  for i, text in enumerate(offset_texts.TEXTS):
    tokens = tokenize_with_offsets(python, text)
    assert got["tokenize"][i] == ids(text) == got["tokens"][i], text
    spans = char_spans(text, got["starts"][i], got["limits"][i])
    assert spans == [(s, e) for _, s, e in tokens], text
  assert (
    got["specials"]
    == got["offsets_specials"]
    == {
      "start_of_sequence_id": cls_id,
      "end_of_segment_id": sep_id,
      "mask_id": python.vocab["[MASK]"],
      "padding_id": 0,
      "vocab_size": len(python.vocab),
    }
  )
  # The encoder of the pair takes what the preprocessor gives.
  encoder = tf.saved_model.load(str(enc))
  pooled = encoder(
    {k: tf.constant(v) for k, v in got["single"].items()}, training=False
  )["pooled_output"]
  np.testing.assert_allclose(got["pooled"], pooled, atol=1e-6, rtol=0)


def test_wordpiece_preprocessor_offsets(tmp_path):
  exporter = get_exporter("tfhub_preprocess")(None, str(VOCAB), True, SEQ)
  exporter.save(str(tmp_path / "pre"))
  pre = tf.saved_model.load(str(tmp_path / "pre"))
  python = FullTokenizer(str(VOCAB), True)
  texts = offset_texts.TEXTS
  tokens, starts, limits = pre.tokenize_with_offsets(tf.constant(texts))
  assert tokens.shape.rank == starts.shape.rank == 3  # [batch, words, pieces]
  assert tokens.to_list() == pre.tokenize(tf.constant(texts)).to_list()
  for i, text in enumerate(texts):
    expected = tokenize_with_offsets(python, text)
    assert tokens[i].flat_values.numpy().tolist() == (
      python.convert_tokens_to_ids([t for t, _, _ in expected])
    )
    spans = char_spans(
      text, starts[i].flat_values.numpy(), limits[i].flat_values.numpy()
    )
    assert spans == [(s, e) for _, s, e in expected], text
  specials = pre.tokenize.get_special_tokens_dict()
  assert {k: int(v) for k, v in specials.items()} == {
    "start_of_sequence_id": python.vocab["[CLS]"],
    "end_of_segment_id": python.vocab["[SEP]"],
    "mask_id": python.vocab["[MASK]"],
    "padding_id": 0,
    "vocab_size": len(python.vocab),
  }


def _assert_arrays(prefix, expected):
  converted = tf.train.load_checkpoint(str(prefix))
  assert sorted(converted.get_variable_to_shape_map()) == sorted(expected)
  for name, array in expected.items():
    np.testing.assert_array_equal(converted.get_tensor(name), array, name)


def _ckpt_a(prefixes):
  reader = tf.train.load_checkpoint(str(CKPT_A))
  return {
    n: reader.get_tensor(n)
    for n in reader.get_variable_to_shape_map()
    if n.startswith(prefixes)
  }


@pytest.mark.slow  # two exports and two conversions: ~1 min
def test_our_sentencepiece_encoder_imports(pair, model_file, tmp_path):
  result = convert_tfhub(pair[1], tmp_path / "back")
  assert result.returncode == 0, result.stderr[-2000:]
  _assert_arrays(
    tmp_path / "back" / "bert_model.ckpt", _ckpt_a(("bert/", "cls/predictions"))
  )
  spiece = (tmp_path / "back" / "spiece.model").read_bytes()
  assert spiece == open(model_file, "rb").read()
  assert not (tmp_path / "back" / "vocab.txt").exists()
  result = convert_tfhub(pair[1], tmp_path / "hf", "--output_format=hf")
  assert result.returncode == 1
  assert result.stderr.strip().splitlines()[-1] == (
    "ERROR: --input=%s tokenizes with a SentencePiece model, which an HF "
    "BERT folder (vocab.txt) cannot hold: use --output_format=tf1" % pair[1]
  )


# Original TF1 name -> Model Garden's (what export_tfhub writes).
_MODEL_GARDEN_NAMES = [
  (r"bert/embeddings/word_embeddings", "word_embeddings/embeddings"),
  (r"bert/embeddings/position_embeddings", "position_embedding/embeddings"),
  (r"bert/embeddings/token_type_embeddings", "type_embeddings/embeddings"),
  (r"bert/embeddings/LayerNorm/", "embeddings/layer_norm/"),
  (r"bert/encoder/layer_(\d)/", r"transformer/layer_\1/"),
  (r"attention/self/", "self_attention/"),
  (r"attention/output/dense/", "self_attention/attention_output/"),
  (r"attention/output/LayerNorm/", "self_attention_layer_norm/"),
  (r"intermediate/dense/", "intermediate/"),
  (r"output/dense/", "output/"),
  (r"output/LayerNorm/", "output_layer_norm/"),
  (r"bert/pooler/dense/", "pooler_transform/"),
]


def _model_garden_layout(folder, asset, rows=None, heads=4):
  """ckpt_a's encoder as a SavedModel with Model Garden's variable names and
  per-head shapes and its `sp_model_file` asset, as the importer reads
  `export_tfhub --sp_model_file` (the first `rows` embedding rows only)."""
  module = tf.Module()
  module.weights = []
  for name, array in sorted(_ckpt_a(("bert/",)).items()):
    garden = name
    for pattern, replacement in _MODEL_GARDEN_NAMES:
      garden = re.sub(pattern, replacement, garden)
    h = array.shape[-1]
    if re.search(r"self_attention/(query|key|value)/kernel", garden):
      array = array.reshape(h, heads, h // heads)
    elif re.search(r"self_attention/(query|key|value)/bias", garden):
      array = array.reshape(heads, h // heads)
    elif garden.endswith("attention_output/kernel"):
      array = array.reshape(heads, h // heads, h)
    elif garden == "word_embeddings/embeddings" and rows:
      array = array[:rows]
    module.weights.append(tf.Variable(array, name=garden))
  module.sp_model_file = tf.saved_model.Asset(str(asset))
  tf.saved_model.save(module, str(folder))
  return folder


def test_model_garden_sentencepiece_encoder_imports(model_file, tmp_path):
  encoder = _model_garden_layout(tmp_path / "garden", model_file)
  result = convert_tfhub(encoder, tmp_path / "back")
  assert result.returncode == 0, result.stderr[-2000:]
  _assert_arrays(tmp_path / "back" / "bert_model.ckpt", _ckpt_a(("bert/",)))
  spiece = (tmp_path / "back" / "spiece.model").read_bytes()
  assert spiece == open(model_file, "rb").read()


def test_sentencepiece_assets_that_do_not_fit_are_refused(model_file, tmp_path):
  small = _model_garden_layout(tmp_path / "small", model_file, rows=10)
  with pytest.raises(
    InputError,
    match=r"^%s: 400 tokens, more than the model's vocab_size 10 "
    % re.escape(str(small / "assets" / "spm.model")),
  ):
    tfhub_import.read_tfhub_encoder(str(small))
  bad = tmp_path / "bad.model"
  bad.write_text("not a model\n")
  broken = _model_garden_layout(tmp_path / "broken", bad)
  with pytest.raises(
    InputError,
    match=r"^%s: not a SentencePiece model \("
    % re.escape(str(broken / "assets" / "bad.model")),
  ):
    tfhub_import.read_tfhub_encoder(str(broken))
