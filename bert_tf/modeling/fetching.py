"""Fetches a BERT by name into the original layout: a Google zip from the
registry, or a HuggingFace repo downloaded and converted
(`python -m bert_tf.fetch_model`, `from_pretrained("bert-base-uncased")`).

TensorFlow-free at import: only converting an HF model loads it.

Example:
    folder = fetch_model("uncased_L-12_H-768_A-12", "models")
"""

import os
import shutil

from bert_tf.checkpoints import fetch
from bert_tf.checkpoints import transfer
from bert_tf.io_utils import InputError


def fetch_hf(repo_id, output_dir, hf_endpoint=None, network=None):
  """Downloads HF repo `repo_id` and converts it into `output_dir`."""
  model_dir = os.path.join(output_dir, repo_id.replace("/", "--"))
  if fetch.existing_model(model_dir):
    return model_dir
  # Kept between runs so that a broken download resumes; its files are
  # checked again before they are used.
  staging = os.path.join(
    output_dir, ".%s.download" % os.path.basename(model_dir)
  )
  fetch.download_hf(repo_id, staging, hf_endpoint, network)
  # Imported here: TensorFlow is needed (and loaded, ~5 s) only to convert.
  # pylint: disable-next=g-import-not-at-top
  from bert_tf.modeling.conversion import convert

  try:
    with fetch.building_dir(model_dir, staging) as scratch:
      convert(staging, "hf", scratch)
  except InputError as e:
    # Verified downloads that do not convert would fail every later run
    # the same way: start from scratch next time.
    shutil.rmtree(staging)
    raise InputError(
      "%s (the downloads in %s were removed)" % (e, staging)
    ) from e
  shutil.rmtree(staging)
  return model_dir


def fetch_model(
  name, output_dir, base_url=None, hf_endpoint=None, retries=3, network=None
):
  """Fetches registry model or HF repo `name`; returns its folder.
  `network` (a `transfer.Network`) overrides `retries`."""
  network = network or transfer.Network(retries=retries)
  kind, key = fetch.resolve_name(name)
  if kind == "hf":
    return fetch_hf(key, output_dir, hf_endpoint, network)
  return fetch.fetch_google(key, output_dir, base_url, network)
