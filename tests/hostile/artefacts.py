"""Hostile model folders for tests/hostile/test_untrusted_artefacts.py:
copies of good SavedModels, HuggingFace and original-layout folders with one
thing made to lead out of the folder, to lie, or to be damaged.

Example:
    secret = plant_secret(tmp_path)
    folder = tfhub_copy(tmp_path / "a", GOLDEN_TFHUB)
    set_asset_name(folder, "../../secret.txt")
"""

import json
import os
import shutil

from tensorflow.core.protobuf import saved_model_pb2

from tests.conftest import REPO
from tests.helpers.checkpoints import ENCODER_DIR
from tests.helpers.checkpoints import VOCAB
from tests.helpers.hf_models import tiny_hf_model

# Model Garden's TF Hub encoder of ckpt_a (its vocab asset: vocab_small.txt).
GOLDEN_TFHUB = REPO.parent / "shared" / "golden" / "tfhub" / "encoder"
SECRET = "TOP SECRET: not a vocabulary\n"
METADATA = ("assets.extra", "export_config.json")


def plant_secret(folder):
  """A file outside every artefact that none may lead to."""
  path = folder / "secret.txt"
  path.write_text(SECRET)
  return path


def tfhub_copy(dst, src=GOLDEN_TFHUB):
  shutil.copytree(src, dst)
  return dst


def set_asset_name(folder, name):
  """Makes saved_model.pb name its vocab asset `name`."""
  path = folder / "saved_model.pb"
  proto = saved_model_pb2.SavedModel.FromString(path.read_bytes())
  for asset in proto.meta_graphs[0].asset_file_def:
    asset.filename = name
  path.write_bytes(proto.SerializeToString())


def only_asset(folder):
  (name,) = os.listdir(folder / "assets")
  return folder / "assets" / name


def link_out(path, target):
  """Replaces `path` (file or folder) with a symlink to `target`."""
  if path.is_dir() and not path.is_symlink():
    shutil.rmtree(path)
  else:
    path.unlink()
  path.symlink_to(target)
  return path


def edit_metadata(folder, change):
  """Our export's assets.extra/export_config.json, edited by `change`."""
  path = folder.joinpath(*METADATA)
  metadata = json.loads(path.read_text())
  change(metadata)
  path.write_text(json.dumps(metadata))
  return path


def cut_in_half(path):
  data = path.read_bytes()
  path.write_bytes(data[: len(data) // 2])
  return path


def hf_folder(folder):
  tiny_hf_model(str(folder))
  return folder


def tf1_folder(folder):
  """ckpt_b in the original layout (checkpoint, config, vocab)."""
  shutil.copytree(ENCODER_DIR / "ckpt_b", folder)
  shutil.copyfile(VOCAB, folder / "vocab.txt")
  return folder


def long_vocab(path, lines=30522):
  """A vocabulary of BERT-Base's size (over any tiny embedding table)."""
  path.write_text(
    "".join("[UNK]\n" if i == 100 else "w%d\n" % i for i in range(lines))
  )
  return path


def hf_cache_snapshot(root):
  """A HuggingFace cache repo: snapshots/<rev>/<file> -> ../../blobs/<file>."""
  repo = root / "models--someone--tiny"
  hf_folder(repo / "blobs")
  snapshot = repo / "snapshots" / "0123abcd"
  snapshot.mkdir(parents=True)
  for name in os.listdir(repo / "blobs"):
    (snapshot / name).symlink_to(os.path.join("..", "..", "blobs", name))
  return snapshot
