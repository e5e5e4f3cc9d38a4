"""The original Google BERT checkpoints by name, as data.

Names, dates and descriptions are those of the google-research/bert README:
the 2018-2019 BERT-Base/Large models and the 24 smaller models of "Well-Read
Students Learn Better" (2020). Each zip holds `bert_model.ckpt.*`,
`bert_config.json` and `vocab.txt`.

Example:
    entry = GOOGLE_MODELS["uncased_L-12_H-768_A-12"]
    url = "%s/%s" % (GOOGLE_BASE_URL, entry.path)

`sha256` is None where no checksum is known (Google published none); a
value set here makes every download of that model verified against it.
"""

import collections

GOOGLE_BASE_URL = "https://storage.googleapis.com/bert_models"

ModelEntry = collections.namedtuple(
  "ModelEntry", ["path", "description", "sha256"]
)


def _entry(path, description, sha256=None):
  return ModelEntry(path, description, sha256)


GOOGLE_MODELS = {
  "uncased_L-12_H-768_A-12": _entry(
    "2018_10_18/uncased_L-12_H-768_A-12.zip",
    "BERT-Base, Uncased: 12-layer, 768-hidden, 12-heads, 110M parameters",
  ),
  "uncased_L-24_H-1024_A-16": _entry(
    "2018_10_18/uncased_L-24_H-1024_A-16.zip",
    "BERT-Large, Uncased: 24-layer, 1024-hidden, 16-heads, 340M parameters",
  ),
  "cased_L-12_H-768_A-12": _entry(
    "2018_10_18/cased_L-12_H-768_A-12.zip",
    "BERT-Base, Cased: 12-layer, 768-hidden, 12-heads, 110M parameters",
  ),
  "cased_L-24_H-1024_A-16": _entry(
    "2018_10_18/cased_L-24_H-1024_A-16.zip",
    "BERT-Large, Cased: 24-layer, 1024-hidden, 16-heads, 340M parameters",
  ),
  "wwm_uncased_L-24_H-1024_A-16": _entry(
    "2019_05_30/wwm_uncased_L-24_H-1024_A-16.zip",
    "BERT-Large, Uncased (Whole Word Masking): 24-layer, 1024-hidden, "
    "16-heads, 340M parameters",
  ),
  "wwm_cased_L-24_H-1024_A-16": _entry(
    "2019_05_30/wwm_cased_L-24_H-1024_A-16.zip",
    "BERT-Large, Cased (Whole Word Masking): 24-layer, 1024-hidden, "
    "16-heads, 340M parameters",
  ),
  "multi_cased_L-12_H-768_A-12": _entry(
    "2018_11_23/multi_cased_L-12_H-768_A-12.zip",
    "BERT-Base, Multilingual Cased: 104 languages, 12-layer, 768-hidden, "
    "12-heads, 110M parameters",
  ),
  "multilingual_L-12_H-768_A-12": _entry(
    "2018_11_03/multilingual_L-12_H-768_A-12.zip",
    "BERT-Base, Multilingual Uncased (not recommended): 102 languages, "
    "12-layer, 768-hidden, 12-heads, 110M parameters",
  ),
  "chinese_L-12_H-768_A-12": _entry(
    "2018_11_03/chinese_L-12_H-768_A-12.zip",
    "BERT-Base, Chinese: Simplified and Traditional, 12-layer, "
    "768-hidden, 12-heads, 110M parameters",
  ),
}

# The 2020 release: L in 2..12 x H in 128..768, A = H / 64; four have names.
_SMALL_NAMES = {
  (2, 128): "BERT-Tiny",
  (4, 256): "BERT-Mini",
  (4, 512): "BERT-Small",
  (8, 512): "BERT-Medium",
}


def _small_models():
  models = {}
  for layers in (2, 4, 6, 8, 10, 12):
    for hidden in (128, 256, 512, 768):
      name = "uncased_L-%d_H-%d_A-%d" % (layers, hidden, hidden // 64)
      named = _SMALL_NAMES.get((layers, hidden))
      description = "%s%d-layer, %d-hidden, %d-heads (Well-Read Students)" % (
        named + ": " if named else "",
        layers,
        hidden,
        hidden // 64,
      )
      key = name
      if name in GOOGLE_MODELS:  # 12/768: BERT-Base re-trained, 2018's name.
        key = name + "_2020"
        description = "BERT-Base re-trained: " + description
      models[key] = _entry("2020_02_20/%s.zip" % name, description)
  return models


GOOGLE_MODELS.update(_small_models())

# The README's names for four of the small models, e.g. "bert-tiny".
ALIASES = {
  named.lower(): "uncased_L-%d_H-%d_A-%d" % (layers, hidden, hidden // 64)
  for (layers, hidden), named in _SMALL_NAMES.items()
}
