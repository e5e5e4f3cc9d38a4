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

from absl import flags

from bert_tf.checkpoints import fetch
from bert_tf.checkpoints import model_registry
from bert_tf.checkpoints import transfer
from bert_tf.io_utils import InputError
from bert_tf.modeling.fetching import fetch_model
from bert_tf.runtime import app
from bert_tf.runtime import flag_checks

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
  flag_checks.non_negative("retries")
  flags.DEFINE_float(
    "timeout",
    60,
    "Seconds a connection may stay silent "
    "(or under 1 KiB/s) before it is dropped and resumed.",
  )
  flag_checks.positive("timeout")
  flags.DEFINE_float("deadline", 7200, "Seconds one file may take in all.")
  flag_checks.positive("deadline")
  flags.DEFINE_bool("list", False, "Print the known model names and exit.")


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
