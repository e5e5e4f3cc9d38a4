"""Artefact: every path an untrusted model folder names stays inside it."""

import os

import pytest

from bert_tf.checkpoints.artefact import Artefact
from bert_tf.io_utils import InputError


@pytest.fixture
def outside(tmp_path):
  secret = tmp_path / "secret.txt"
  secret.write_text("TOP SECRET\n")
  model = tmp_path / "model"
  (model / "assets").mkdir(parents=True)
  (model / "assets" / "vocab.txt").write_text("[UNK]\n")
  return model, secret


@pytest.mark.parametrize(
  "parts", [("..", "secret.txt"), ("assets", "../../secret.txt")]
)
def test_a_name_with_dot_dot_is_refused(outside, parts):
  model, _ = outside
  with pytest.raises(InputError, match="a path out of its folder"):
    Artefact(model, "--input").path(*parts)


def test_an_absolute_name_is_refused(outside):
  model, secret = outside
  with pytest.raises(InputError, match="a path out of its folder"):
    Artefact(model).file("assets", str(secret))


def test_a_symlink_out_is_refused_one_inside_is_followed(outside):
  model, secret = outside
  (model / "assets" / "leak.txt").symlink_to(secret)
  (model / "assets" / "alias.txt").symlink_to("vocab.txt")
  artefact = Artefact(model, "--input")
  with pytest.raises(InputError) as e:
    artefact.file("assets", "leak.txt")
  assert str(e.value) == (
    "%s leads out of --input=%s (a symlink to %s)"
    % (model / "assets" / "leak.txt", model, secret)
  )
  assert artefact.file("assets", "alias.txt") == os.path.realpath(
    model / "assets" / "vocab.txt"
  )


def test_a_folder_symlinked_out_is_refused(outside, tmp_path):
  model, _ = outside
  elsewhere = tmp_path / "elsewhere"
  elsewhere.mkdir()
  (elsewhere / "variables.index").write_bytes(b"x")
  (model / "variables").symlink_to(elsewhere, target_is_directory=True)
  with pytest.raises(InputError, match="leads out of "):
    Artefact(model).names("variables", prefix="variables.")


def test_a_fifo_is_not_read(outside):
  model, _ = outside
  os.mkfifo(model / "config.json")
  with pytest.raises(InputError, match="config.json: not a regular file"):
    Artefact(model).read_json("config.json")


def test_json_must_be_an_object_and_small(outside):
  model, _ = outside
  (model / "a.json").write_text("[1, 2]")
  (model / "b.json").write_text('{"x": ')
  (model / "c.json").write_text(" " * (2 << 20))
  artefact = Artefact(model)
  with pytest.raises(InputError, match="a.json: not a JSON object"):
    artefact.read_json("a.json")
  with pytest.raises(InputError, match="b.json: not JSON"):
    artefact.read_json("b.json")
  with pytest.raises(
    InputError, match="c.json: 2097152 bytes, more than the 1048576"
  ):
    artefact.read_json("c.json")


def test_a_huggingface_cache_snapshot_may_point_into_its_blobs(tmp_path):
  """The Hub's cache keeps each file once in blobs/ and links it from
  snapshots/<revision>/; the links stay inside the repo's cache folder."""
  repo = tmp_path / "models--org--bert"
  (repo / "blobs").mkdir(parents=True)
  (repo / "blobs" / "ab12").write_text('{"vocab_size": 9}')
  snapshot = repo / "snapshots" / "0123abc"
  snapshot.mkdir(parents=True)
  (snapshot / "config.json").symlink_to("../../blobs/ab12")
  (tmp_path / "other").write_text("{}")
  (snapshot / "vocab.txt").symlink_to(tmp_path / "other")
  artefact = Artefact(snapshot)
  assert artefact.read_json("config.json") == {"vocab_size": 9}
  with pytest.raises(InputError, match="leads out of "):
    artefact.file("vocab.txt")
