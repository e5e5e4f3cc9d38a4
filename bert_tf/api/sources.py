"""Where `from_pretrained(path_or_name)` takes a model from.

* a folder in the original layout: `bert_config.json`, `bert_model.ckpt.*`,
  `vocab.txt` (what Google's zips, `convert_checkpoint` and `fetch_model`
  give);
* a HuggingFace BERT folder: `config.json`, `model.safetensors` (or
  `pytorch_model.bin`), `vocab.txt`, read through `checkpoints.hf_import`;
* a run folder (`run_config.json` + the engine checkpoints of a training
  script or of `.save_run()`): its model, head and tokenizer settings;
* otherwise a model name `fetch_model` knows (`bert-tiny`,
  `uncased_L-12_H-768_A-12`, `google-bert/bert-base-uncased`, ...),
  downloaded once into `cache_dir` (default `$BERT_TF_HOME`, else
  `~/.cache/bert_tf`).

Example:
    source = resolve("models/uncased_L-2_H-128_A-2")
    source.config, source.vocab_file, source.do_lower_case
    source.load(exporter)   # the exporter's model gets the weights
"""

import collections
import os

from bert_tf.checkpoints import checkpoint_io
from bert_tf.checkpoints import hf_import
from bert_tf.checkpoints.artefact import Artefact
from bert_tf.io_utils import InputError
from bert_tf.jobs import wiring
from bert_tf.modeling import fetching
from bert_tf.modeling import pretrained
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.runs import run_config

# config: BertConfig; load(exporter): its model's weights from the source;
# recorded: the folder's RunConfig or None.
Source = collections.namedtuple(
  "Source", "config vocab_file do_lower_case load recorded"
)
_CKPT = "bert_model.ckpt"


def cache_dir():
  return os.environ.get("BERT_TF_HOME") or os.path.join(
    os.path.expanduser("~"), ".cache", "bert_tf"
  )


def _vocab(folder, vocab_file):
  # The folder's own vocab.txt stays inside it: a symlink to another file
  # would be read, and copied into the runs saved from this model.
  vocab_file = (
    vocab_file
    or Artefact(folder).file("vocab.txt", required=False)
    or os.path.join(folder, "vocab.txt")
  )
  if not os.path.isfile(vocab_file):
    raise InputError("%s: no vocab.txt (give vocab_file=...)" % folder)
  return vocab_file


def _check_head(name_map, shapes, source):
  """A task head in the checkpoint that is not this model's (e.g. other
  num_labels) is named as such, not as a config mismatch."""
  for name, variable in sorted(name_map.items()):
    if (
      not name.startswith("bert/")
      and name in shapes
      and list(shapes[name]) != list(variable.shape)
    ):
      raise InputError(
        "%s: the checkpoint's task head has %s of shape %s, this model "
        "%s (a head for other labels or choices: give the settings it was "
        "trained with)"
        % (source, name, list(shapes[name]), list(variable.shape))
      )


def _tf1_loader(prefix):
  def load(exporter):
    _check_head(
      exporter.tf1_variables(), checkpoint_io.checkpoint_shapes(prefix), prefix
    )
    report = checkpoint_io.init_from_checkpoint(
      prefix, exporter.tf1_variables()
    )
    checkpoint_io.require_encoder_loaded(report, prefix)

  return load


def _hf_loader(folder):
  def load(exporter):
    arrays, _ = hf_import.read_hf_weights(folder)
    shapes = {name: value.shape for name, value in arrays.items()}
    _check_head(exporter.tf1_variables(), shapes, folder)
    report = checkpoint_io.assign_arrays(
      exporter.tf1_variables(), shapes, arrays.__getitem__, folder
    )
    checkpoint_io.require_encoder_loaded(report, folder)

  return load


def _run_source(folder, recorded, vocab_file, do_lower_case):
  vocab = (
    vocab_file or run_config.tokenizer_files(folder, recorded)["vocab_file"]
  )
  if not vocab:
    raise InputError(
      "%s: a run without a WordPiece vocabulary (give vocab_file=...)" % folder
    )
  if not os.path.isfile(vocab):
    raise InputError("vocab_file=%s: no such file" % vocab)
  recorded_case = recorded.tokenizer.get("do_lower_case")
  if do_lower_case is not None and do_lower_case != recorded_case:
    raise InputError(
      "%s was trained with do_lower_case=%s, not %s"
      % (folder, recorded_case, do_lower_case)
    )
  return Source(
    BertConfig.from_dict(
      recorded.bert_config, os.path.join(folder, run_config.FILE)
    ),
    vocab,
    recorded_case,
    lambda exporter: exporter.restore(folder),
    recorded,
  )


def resolve(path_or_name, vocab_file=None, do_lower_case=None, cache=None):
  """The `Source` of a folder or a model name (see the module docstring)."""
  path = os.fspath(path_or_name)
  if not os.path.exists(path):
    path = fetching.fetch_model(path, cache or cache_dir())
  if not os.path.isdir(path):
    raise InputError("%s: not a model folder" % path)
  recorded = run_config.read(path)
  if recorded is not None:
    return _run_source(path, recorded, vocab_file, do_lower_case)
  if os.path.isfile(os.path.join(path, "bert_config.json")):
    prefix = os.path.join(path, _CKPT)
    checkpoint_io.resolve_checkpoint(prefix)  # one line if it is missing
    config = BertConfig.from_json_file(os.path.join(path, "bert_config.json"))
    lower = True if do_lower_case is None else do_lower_case
    wiring.check_case(lower, prefix)  # the original's name check
    return Source(
      config, _vocab(path, vocab_file), lower, _tf1_loader(prefix), None
    )
  if os.path.isfile(os.path.join(path, "config.json")):
    config = hf_import.read_hf_config(path)
    lower = do_lower_case
    if lower is None:
      lower = pretrained.hf_lower_case(path)
    return Source(
      config,
      _vocab(path, vocab_file),
      True if lower is None else lower,
      _hf_loader(path),
      None,
    )
  raise InputError(
    "%s: not a model folder (no bert_config.json + %s, "
    "HuggingFace config.json or run_config.json)" % (path, _CKPT)
  )
