"""Fetch a BERT checkpoint by name, in the original layout.

    python -m bert_tf.fetch_model uncased_L-12_H-768_A-12 --output_dir=models
    python -m bert_tf.fetch_model sentence-transformers/all-MiniLM-L6-v2 \\
        --output_dir=models
    python -m bert_tf.fetch_model --list

A registry name (the original Google zips, see `--list`) is downloaded and
unpacked into `output_dir/<name>`; a HuggingFace repo id (anything with a
"/") has its `config.json`, `vocab.txt` and `model.safetensors` downloaded
and converted into `output_dir/<owner>--<name>` (the Hub's short names,
e.g. bert-base-uncased, are known). Either way the folder holds
`bert_model.ckpt.*`, `bert_config.json` and `vocab.txt`, and its path is
printed. An existing complete folder is reused; a broken download resumes
when the command is run again. Every file is verified before it is kept
(`bert_tf.checkpoints.transfer`). Downloading needs no TensorFlow (only the
conversion of an HF model loads it).
"""

import os
import shutil

from absl import flags

from bert_tf.checkpoints import fetch
from bert_tf.checkpoints import model_registry
from bert_tf.checkpoints import transfer
from bert_tf.cli import app
from bert_tf.io_utils import InputError

FLAGS = flags.FLAGS


def define_flags():
  """Defines this command's flags."""
  flags.DEFINE_string(
    "output_dir", None, "Folder that receives one sub-folder per model."
  )
  flags.DEFINE_string(
    "base_url",
    model_registry.GOOGLE_BASE_URL,
    "Where the Google zips are (a mirror, a local server).",
  )
  flags.DEFINE_string(
    "hf_endpoint",
    fetch.HF_ENDPOINT,
    "HuggingFace Hub base URL (a mirror, a local server).",
  )
  flags.DEFINE_integer(
    "retries",
    3,
    "How often a broken download is "
    "resumed (after a pause that doubles) before giving "
    "up.",
  )
  flags.DEFINE_float(
    "timeout",
    60,
    "Seconds a connection may stay silent "
    "(or under 1 KiB/s) before it is dropped and resumed.",
  )
  flags.DEFINE_float("deadline", 7200, "Seconds one file may take in all.")
  flags.DEFINE_bool("list", False, "Print the known model names and exit.")


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
  from bert_tf.cli.convert_checkpoint import convert

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


def _listing():
  lines = [
    "%-30s %s" % (name, entry.description)
    for name, entry in model_registry.GOOGLE_MODELS.items()
  ]
  lines += ["%-30s = %s" % item for item in model_registry.ALIASES.items()]
  lines += [
    "%-30s = %s (HuggingFace)" % item for item in fetch.HF_NAMES.items()
  ]
  lines.append("%-30s any HuggingFace BERT repo id" % "<owner>/<name>")
  return "\n".join(lines)


def main(argv):
  names = argv[1:]
  if FLAGS.list:
    print(_listing())
    return
  if not names:
    raise InputError(
      "name a model, e.g. uncased_L-12_H-768_A-12 or "
      "owner/name (--list shows the names)"
    )
  if not FLAGS.output_dir:
    raise InputError("--output_dir is required")
  network = transfer.Network(
    retries=FLAGS.retries, timeout=FLAGS.timeout, deadline=FLAGS.deadline
  )
  for name in names:
    try:
      model_dir = fetch_model(
        name,
        FLAGS.output_dir,
        FLAGS.base_url,
        FLAGS.hf_endpoint,
        network=network,
      )
    except KeyboardInterrupt:  # not while downloading: nothing half-written
      raise InputError("%s: interrupted; nothing written" % name) from None
    print(model_dir)


def run():
  """Console-script entry point."""
  define_flags()
  app.run_app(main)


if __name__ == "__main__":
  run()
