"""BERT checkpoints by name: the Google zips of the registry and
HuggingFace repos, each downloaded with `transfer.download` (verified,
resumable), and the model folders they become.

Example:
    kind, key = resolve_name("bert-base-uncased")  # ("hf", "google-bert/...")
    model_dir = fetch_google(key, "models/")   # models/uncased_L-12_H-768_A-12
    hf_dir = download_hf("sentence-transformers/all-MiniLM-L6-v2", "staging/")

A model folder is built in a temporary folder next to it and renamed into
place once complete, so a folder at the final path is always whole.
Standard library only (zipfile) besides `transfer.py`.
"""

import contextlib
import difflib
import os
import re
import shutil
import zipfile

from absl import logging

from bert_tf.checkpoints import model_registry
from bert_tf.checkpoints import transfer
from bert_tf.io_utils import InputError
from bert_tf.io_utils import make_temp_dir

HF_ENDPOINT = "https://huggingface.co"
HF_FILES = ("config.json", "vocab.txt", "model.safetensors")
# What an original-layout model folder holds (the zip's three items).
MODEL_FILES = ("bert_config.json", "vocab.txt", "bert_model.ckpt.index")
# The Hub's short names of the original models (now under google-bert/).
HF_NAMES = {
  name: "google-bert/" + name
  for name in (
    "bert-base-uncased",
    "bert-base-cased",
    "bert-large-uncased",
    "bert-large-cased",
    "bert-base-multilingual-cased",
    "bert-base-multilingual-uncased",
    "bert-base-chinese",
    "bert-large-uncased-whole-word-masking",
    "bert-large-cased-whole-word-masking",
  )
}


def resolve_name(name):
  """("google", registry key) or ("hf", repo id) for a model name.

  Anything with a "/" is a HuggingFace repo id, and so are the Hub's short
  names (bert-base-uncased, ...); other names must be in the registry (or
  an alias such as "bert-tiny"), else one line lists the closest names. A
  local folder is refused with the command that converts it.
  """
  if os.path.isdir(name):
    if not missing_files(name):
      raise InputError(
        "%s is a local model folder in the original layout "
        "already: use it as it is" % name
      )
    raise InputError(
      "%s is a local folder, not a model name: convert an HF "
      "folder with python -m bert_tf.convert_checkpoint "
      "--input=%s --input_format=hf --output_dir=DIR" % (name, name)
    )
  if name.lower() in HF_NAMES:
    return "hf", HF_NAMES[name.lower()]
  if "/" in name:
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", name):
      raise InputError("%r is not a HuggingFace repo id (owner/name)" % name)
    return "hf", name
  key = model_registry.ALIASES.get(name.lower(), name)
  if key in model_registry.GOOGLE_MODELS:
    return "google", key
  close = difflib.get_close_matches(
    name,
    list(model_registry.GOOGLE_MODELS)
    + list(model_registry.ALIASES)
    + list(HF_NAMES),
    n=4,
    cutoff=0.6,
  )
  raise InputError(
    "unknown model %r; %s (or give a HuggingFace id such as "
    "owner/name; --list shows all names)"
    % (name, "close names: " + ", ".join(close) if close else "no close name")
  )


def missing_files(model_dir):
  """The original-layout files `model_dir` lacks ([] when complete)."""
  return [
    f for f in MODEL_FILES if not os.path.isfile(os.path.join(model_dir, f))
  ]


def existing_model(model_dir):
  """True if `model_dir` is a complete model folder (reuse it); False if
  absent; InputError if something else is in the way."""
  if not os.path.exists(model_dir):
    return False
  missing = missing_files(model_dir)
  if missing:
    raise InputError(
      "%s exists but lacks %s; move it away to fetch again"
      % (model_dir, ", ".join(missing))
    )
  logging.info("%s is already complete; not downloading again", model_dir)
  return True


@contextlib.contextmanager
def building_dir(final_dir, source):
  """Yields a scratch folder next to `final_dir` for the body to fill.

  Afterwards the model (the scratch folder, or its only sub-folder, as in
  the 2018 zips) must be complete; it is renamed to `final_dir`. Whatever
  happens, nothing else of the scratch folder is left. `source` names the
  input in messages.
  """
  parent = os.path.dirname(os.path.abspath(final_dir))
  scratch = make_temp_dir(parent, ".fetch-")
  try:
    try:
      yield scratch
    except OSError as e:
      if e.filename is None or str(e.filename).startswith(scratch):
        # A full disk while unpacking or converting: the user's folder.
        raise OSError(e.errno, e.strerror, final_dir) from e
      raise
    entries = os.listdir(scratch)
    built = scratch
    if len(entries) == 1 and os.path.isdir(os.path.join(scratch, entries[0])):
      built = os.path.join(scratch, entries[0])  # zips with a top folder
    missing = missing_files(built)
    if missing:
      raise InputError("%s: lacks %s" % (source, ", ".join(missing)))
    os.rename(built, final_dir)
  finally:
    shutil.rmtree(scratch, ignore_errors=True)


def fetch_google(name, output_dir, base_url=None, network=None):
  """Downloads and unpacks registry model `name` into `output_dir/name`."""
  entry = model_registry.GOOGLE_MODELS[name]
  model_dir = os.path.join(output_dir, name)
  if existing_model(model_dir):
    return model_dir
  url = "%s/%s" % (
    (base_url or model_registry.GOOGLE_BASE_URL).rstrip("/"),
    entry.path,
  )
  archive = transfer.download(
    url,
    os.path.join(output_dir, name + ".zip"),
    sha256=entry.sha256,
    network=network,
  )
  try:
    with building_dir(model_dir, archive) as scratch:
      with zipfile.ZipFile(archive) as zf:
        broken = zf.testzip()
        if broken:
          raise zipfile.BadZipFile("CRC error in %s" % broken)
        zf.extractall(scratch)  # Drops absolute and ".." parts of names.
  except zipfile.BadZipFile as e:
    os.remove(archive)
    raise InputError(
      "%s: not a valid zip (%s); removed, run again to "
      "download it again" % (archive, e)
    ) from e
  os.remove(archive)
  return model_dir


def download_hf(repo_id, dest_dir, endpoint=None, network=None):
  """Downloads `HF_FILES` of HF repo `repo_id` into `dest_dir`."""
  for name in HF_FILES:
    url = "%s/%s/resolve/main/%s" % (
      (endpoint or HF_ENDPOINT).rstrip("/"),
      repo_id,
      name,
    )
    transfer.download(url, os.path.join(dest_dir, name), network=network)
  return dest_dir
