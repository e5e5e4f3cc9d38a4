"""The API tests' model folder: fixture checkpoint ckpt_b (1 layer, H=32)
in the original layout, with its vocabulary as vocab.txt."""

import shutil

import pytest

from tests.helpers.checkpoints import ENCODER_DIR
from tests.helpers.checkpoints import VOCAB


@pytest.fixture(scope="session")
def tiny_folder(tmp_path_factory):
  folder = tmp_path_factory.mktemp("tiny_model")
  for path in (ENCODER_DIR / "ckpt_b").iterdir():
    shutil.copy(path, folder / path.name)
  shutil.copy(VOCAB, folder / "vocab.txt")
  return str(folder)
