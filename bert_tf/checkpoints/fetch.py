"""Resumable downloads and atomic unpacking of BERT checkpoints.

Example:
    kind, key = resolve_name("uncased_L-12_H-768_A-12")  # ("google", ...)
    model_dir = fetch_google(key, "models/")   # models/uncased_L-12_H-768_A-12
    hf_dir = download_hf("sentence-transformers/all-MiniLM-L6-v2", "staging/")

A download goes to `<file>.part` and is renamed when its size matches the
server's Content-Length (and its sha256 the registry's, if there is one); an
interrupted download resumes from the `.part` with an HTTP Range request,
within the run and in the next one. A model folder is built in a temporary
folder next to it and renamed into place once complete, so a folder at the
final path is always whole and is reused instead of downloaded again.
Standard library only (urllib, zipfile, hashlib) + tqdm for the progress bar.
"""

import contextlib
import difflib
import hashlib
import http.client
import os
import re
import shutil
import tempfile
import urllib.error
import urllib.request
import zipfile

from absl import logging
import tqdm

from bert_tf.checkpoints import model_registry
from bert_tf.io_utils import InputError

HF_ENDPOINT = "https://huggingface.co"
HF_FILES = ("config.json", "vocab.txt", "model.safetensors")
# What an original-layout model folder holds (the zip's three items).
MODEL_FILES = ("bert_config.json", "vocab.txt", "bert_model.ckpt.index")

_CHUNK = 1 << 20
# Worth resuming: the connection broke, timed out or the server hiccupped.
_TRANSIENT = (ConnectionError, TimeoutError, http.client.HTTPException,
              urllib.error.URLError)


class _ShortRead(ConnectionError):
  """The server closed the connection before Content-Length bytes came."""


def resolve_name(name):
  """("google", registry key) or ("hf", repo id) for a model name.

  Anything with a "/" is a HuggingFace repo id; other names must be in the
  registry (or an alias such as "bert-tiny"), else one line lists the
  closest known names.
  """
  if "/" in name:
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", name):
      raise InputError("%r is not a HuggingFace repo id (owner/name)" % name)
    return "hf", name
  key = model_registry.ALIASES.get(name.lower(), name)
  if key in model_registry.GOOGLE_MODELS:
    return "google", key
  close = difflib.get_close_matches(
      name, list(model_registry.GOOGLE_MODELS) + list(model_registry.ALIASES),
      n=4, cutoff=0.6)
  raise InputError("unknown model %r; %s (or give a HuggingFace id such as "
                   "owner/name; --list shows all names)" %
                   (name, "close names: " + ", ".join(close) if close
                    else "no close name"))


def missing_files(model_dir):
  """The original-layout files `model_dir` lacks ([] when complete)."""
  return [f for f in MODEL_FILES
          if not os.path.isfile(os.path.join(model_dir, f))]


def existing_model(model_dir):
  """True if `model_dir` is a complete model folder (reuse it); False if
  absent; InputError if something else is in the way."""
  if not os.path.exists(model_dir):
    return False
  missing = missing_files(model_dir)
  if missing:
    raise InputError("%s exists but lacks %s; move it away to fetch again" %
                     (model_dir, ", ".join(missing)))
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
  os.makedirs(parent, exist_ok=True)
  scratch = tempfile.mkdtemp(prefix=".fetch-", dir=parent)
  try:
    yield scratch
    entries = os.listdir(scratch)
    built = scratch
    if len(entries) == 1 and os.path.isdir(os.path.join(scratch, entries[0])):
      built = os.path.join(scratch, entries[0])  # zips with a top folder
    missing = missing_files(built)
    if missing:
      raise InputError("%s: lacks %s" % (source, ", ".join(missing)))
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(built, 0o777 & ~umask)  # mkdtemp made it private (0700).
    os.rename(built, final_dir)
  finally:
    shutil.rmtree(scratch, ignore_errors=True)


def _content_range_start_and_total(response):
  match = re.fullmatch(r"bytes (\d+)-\d+/(\d+)",
                       response.headers.get("Content-Range", ""))
  return (int(match.group(1)), int(match.group(2))) if match else (None, None)


def _download_once(url, part, timeout):
  """Appends the rest of `url` to `part`; raises a _TRANSIENT error if the
  file is not complete afterwards."""
  offset = os.path.getsize(part) if os.path.exists(part) else 0
  headers = {"User-Agent": "bert_tf-fetch"}
  if offset:
    headers["Range"] = "bytes=%d-" % offset
  try:
    response = urllib.request.urlopen(urllib.request.Request(url,
                                                             headers=headers),
                                      timeout=timeout)
  except urllib.error.HTTPError as e:
    if e.code == 416 and offset:  # `part` is as long as the file.
      os.remove(part)
      raise _ShortRead("range not satisfiable; starting over") from e
    raise
  with response:
    length = response.headers.get("Content-Length")
    total = int(length) + offset if length else None
    if offset and getattr(response, "status", None) == 206:
      start, range_total = _content_range_start_and_total(response)
      if start != offset:
        os.remove(part)
        raise _ShortRead("server resumed at byte %s, not %d; starting over" %
                         (start, offset))
      total = range_total or total
    elif offset:  # The server ignored Range and sends the whole file.
      offset, total = 0, int(length) if length else None
    with open(part, "ab" if offset else "wb") as f, tqdm.tqdm(
        total=total, initial=offset, unit="B", unit_scale=True,
        unit_divisor=1024, desc=os.path.basename(url),
        disable=None) as bar:
      for chunk in iter(lambda: response.read(_CHUNK), b""):
        f.write(chunk)
        bar.update(len(chunk))
  size = os.path.getsize(part)
  if total is not None and size != total:
    if size > total:
      os.remove(part)
    raise _ShortRead("got %d of %d bytes" % (size, total))


def sha256_of(path):
  digest = hashlib.sha256()
  with open(path, "rb") as f:
    for chunk in iter(lambda: f.read(_CHUNK), b""):
      digest.update(chunk)
  return digest.hexdigest()


def download(url, path, sha256=None, retries=3, timeout=60):
  """Downloads `url` to `path` (kept if already there); returns `path`.

  Resumes from `path + ".part"`, retrying a broken transfer `retries` times.
  A wrong sha256 removes the download and raises InputError.
  """
  if os.path.isfile(path):
    return path
  os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
  part = path + ".part"
  for attempt in range(retries + 1):
    try:
      _download_once(url, part, timeout)
      break
    except ValueError as e:  # urllib: not a URL.
      raise InputError("%s: %s" % (url, e)) from e
    except _TRANSIENT as e:
      if isinstance(e, urllib.error.HTTPError) and e.code < 500:
        raise InputError("%s: HTTP %d %s" % (url, e.code, e.reason)) from e
      if attempt >= retries:
        kept = os.path.getsize(part) if os.path.exists(part) else 0
        raise InputError("%s: download failed (%s); %d bytes kept in %s, run "
                         "again to resume" % (url, e, kept, part)) from e
      logging.warning("%s: %s; resuming", url, e)
  if sha256:
    actual = sha256_of(part)
    if actual != sha256.lower():
      os.remove(part)
      raise InputError("%s: sha256 %s, expected %s; download removed" %
                       (url, actual, sha256.lower()))
  os.replace(part, path)
  return path


def fetch_google(name, output_dir, base_url=None, retries=3):
  """Downloads and unpacks registry model `name` into `output_dir/name`."""
  entry = model_registry.GOOGLE_MODELS[name]
  model_dir = os.path.join(output_dir, name)
  if existing_model(model_dir):
    return model_dir
  url = "%s/%s" % ((base_url or model_registry.GOOGLE_BASE_URL).rstrip("/"),
                   entry.path)
  archive = download(url, os.path.join(output_dir, name + ".zip"),
                     sha256=entry.sha256, retries=retries)
  try:
    with building_dir(model_dir, archive) as scratch:
      with zipfile.ZipFile(archive) as zf:
        broken = zf.testzip()
        if broken:
          raise zipfile.BadZipFile("CRC error in %s" % broken)
        zf.extractall(scratch)  # Drops absolute and ".." parts of names.
  except zipfile.BadZipFile as e:
    os.remove(archive)
    raise InputError("%s: not a valid zip (%s); removed, run again to "
                     "download it again" % (archive, e)) from e
  os.remove(archive)
  return model_dir


def download_hf(repo_id, dest_dir, endpoint=None, retries=3):
  """Downloads `HF_FILES` of HF repo `repo_id` into `dest_dir`."""
  for name in HF_FILES:
    url = "%s/%s/resolve/main/%s" % ((endpoint or HF_ENDPOINT).rstrip("/"),
                                     repo_id, name)
    download(url, os.path.join(dest_dir, name), retries=retries)
  return dest_dir
