"""Where the shared CoNLL-2003 files are (research-only: read at test time,
never copied into the repo); tests using them skip when absent."""

import os
import pathlib

import pytest

from tests.conftest import REPO

_CANDIDATES = [
  os.environ.get("BERT_TF_CONLL_DIR"),
  REPO.parent / "shared" / "data" / "conll2003",
]
CONLL_DIR = next(
  (
    pathlib.Path(p)
    for p in _CANDIDATES
    if p and (pathlib.Path(p) / "train.txt").is_file()
  ),
  None,
)

requires_conll = pytest.mark.skipif(
  CONLL_DIR is None,
  reason="CoNLL-2003 not found (set BERT_TF_CONLL_DIR to the folder with "
  "train.txt, valid.txt, test.txt)",
)
