"""Models by name: registry and HuggingFace names, a Google zip unpacked
into the original layout (and reused), an HF repo converted, and the
command line, against the local server of tests/helpers/fetch_server.py."""

import io
import os
import subprocess
import sys
import zipfile

import pytest

from bert_tf.checkpoints import checkpoint_io
from bert_tf.checkpoints import fetch
from bert_tf.checkpoints import model_registry
from bert_tf.io_utils import InputError
from bert_tf.modeling import pretrained
from bert_tf.modeling.fetching import fetch_model
from tests.conftest import REPO
from tests.helpers.fetch_server import assert_loads
from tests.helpers.fetch_server import NAME
from tests.helpers.fetch_server import tiny_model_zip
from tests.helpers.fetch_server import ZIP_PATH
from tests.helpers.hf_models import tiny_hf_model


@pytest.mark.parametrize("top_folder", [NAME, None])
def test_full_download_unpacks_and_is_reused(tmp_path, serve, top_folder):
  # The 2018 zips hold a top folder, the 2020 ones do not.
  data, arrays = tiny_model_zip(top_folder)
  base, requests = serve({ZIP_PATH: data})
  model_dir = fetch_model(NAME, str(tmp_path), base_url=base)
  assert model_dir == str(tmp_path / NAME)
  assert sorted(os.listdir(tmp_path)) == [NAME]  # No zip, .part or scratch.
  umask = os.umask(0)
  os.umask(umask)
  assert os.stat(model_dir).st_mode & 0o777 == 0o777 & ~umask
  assert_loads(model_dir, arrays)
  assert fetch_model("BERT-Tiny", str(tmp_path), base_url=base) == model_dir
  assert requests == [(ZIP_PATH, None)]  # Reused, not downloaded again.


def test_archive_without_checkpoint_leaves_nothing(tmp_path, serve):
  buffer = io.BytesIO()
  with zipfile.ZipFile(buffer, "w") as zf:
    zf.writestr(NAME + "/vocab.txt", "a\n")
  base, _ = serve({ZIP_PATH: buffer.getvalue()})
  with pytest.raises(
    InputError, match="lacks bert_config.json, bert_model.ckpt.index"
  ):
    fetch_model(NAME, str(tmp_path), base_url=base)
  assert [n for n in os.listdir(tmp_path) if n != NAME + ".zip"] == []


def test_unknown_name_lists_close_names():
  with pytest.raises(InputError) as e:
    fetch.resolve_name("uncased_L-12_H-786_A-12")
  message = str(e.value)
  assert "\n" not in message
  assert "close names: uncased_L-12_H-768_A-12," in message
  assert fetch.resolve_name("bert-mini") == ("google", "uncased_L-4_H-256_A-4")
  assert fetch.resolve_name("a/b-1.0") == ("hf", "a/b-1.0")
  with pytest.raises(InputError, match="not a HuggingFace repo id"):
    fetch.resolve_name("a/b/c")


def test_registry_holds_the_original_release():
  models = model_registry.GOOGLE_MODELS
  assert len(models) == 9 + 24
  assert (
    models["uncased_L-12_H-768_A-12"].path
    == "2018_10_18/uncased_L-12_H-768_A-12.zip"
  )
  assert (
    models["uncased_L-12_H-768_A-12_2020"].path
    == "2020_02_20/uncased_L-12_H-768_A-12.zip"
  )
  assert models["wwm_cased_L-24_H-1024_A-16"].path.startswith("2019_05_30/")


def test_names_and_local_folders(tmp_path):
  assert fetch.resolve_name("bert-base-uncased") == (
    "hf",
    "google-bert/bert-base-uncased",
  )
  assert fetch.resolve_name("BERT-Large-Cased") == (
    "hf",
    "google-bert/bert-large-cased",
  )
  assert fetch.resolve_name("google-bert/bert-base-cased") == (
    "hf",
    "google-bert/bert-base-cased",
  )
  with pytest.raises(InputError, match="close names: bert-base-uncased"):
    fetch.resolve_name("bert-base-uncase")
  folder = tmp_path / "someone" / "model"
  folder.mkdir(parents=True)
  with pytest.raises(
    InputError,
    match="convert an HF folder with python -m "
    "bert_tf.convert_checkpoint --input=%s "
    "--input_format=hf" % folder,
  ):
    fetch.resolve_name(str(folder))


def test_hf_id_is_converted_to_an_original_checkpoint(tmp_path, serve):
  hf_dir = tmp_path / "hf"
  tiny_hf_model(str(hf_dir))
  repo = "someone/tiny-bert"
  files = {
    "/%s/resolve/main/%s" % (repo, name): (hf_dir / name).read_bytes()
    for name in fetch.HF_FILES
  }
  cut = "/%s/resolve/main/model.safetensors" % repo
  base, requests = serve(files, cut=[cut])
  out = tmp_path / "models"
  model_dir = fetch_model(repo, str(out), hf_endpoint=base)
  assert model_dir == str(out / "someone--tiny-bert")
  assert sorted(os.listdir(out)) == ["someone--tiny-bert"]
  assert (out / "someone--tiny-bert" / "vocab.txt").read_bytes() == (
    hf_dir / "vocab.txt"
  ).read_bytes()
  assert requests[-1] == (cut, "bytes=%d-" % (len(files[cut]) // 2))
  # The converted checkpoint equals what loading the HF folder gives.
  _, encoder, heads, _ = pretrained.load_hf_model(str(hf_dir))
  expected = {
    name: variable.numpy()
    for name, variable in checkpoint_io.tf1_name_map(encoder, **heads).items()
  }
  assert_loads(model_dir, expected)


@pytest.mark.process
def test_command_line(tmp_path, serve, tiny_zip):
  base, _ = serve({ZIP_PATH: tiny_zip[0]})
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", no_proxy="127.0.0.1")
  command = [
    sys.executable,
    "-m",
    "bert_tf.fetch_model",
    "--output_dir=%s" % tmp_path,
    "--base_url=%s" % base,
  ]
  ok = subprocess.run(
    command + [NAME],
    cwd=REPO,
    env=env,
    text=True,
    capture_output=True,
    timeout=120,
    check=False,
  )
  assert ok.returncode == 0, ok.stderr[-2000:]
  assert ok.stdout == str(tmp_path / NAME) + "\n"
  bad = subprocess.run(
    command + ["bert-tinny"],
    cwd=REPO,
    env=env,
    text=True,
    capture_output=True,
    timeout=120,
    check=False,
  )
  assert bad.returncode == 1
  assert bad.stderr.startswith(
    "ERROR: unknown model 'bert-tinny'; close names: bert-tiny"
  )
  assert bad.stderr.count("\n") == 1
