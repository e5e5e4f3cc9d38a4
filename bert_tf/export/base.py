"""`Exporter`: a task model + in-graph tokenizer as a raw-text SavedModel.

A subclass (one per task kind, see `bert_tf.export`) builds its model in
`build_model`, lists its input names in `INPUTS` (string tensors [batch],
or other shapes by `input_shapes`) and maps them to output tensors in
`serve`; `signatures` may add signatures beside `serving_default`. This
base class restores the weights (engine checkpoint of a run, or original
TF1 checkpoint), checks request batches, runs many windows through the
model in bounded chunks, and writes the SavedModel plus
`assets.extra/export_config.json` (task, options, source, and which
padded outputs a length output trims).

Example:
    exporter = ClassifierExporter(config, "vocab.txt", True, 128, options)
    exporter.restore("/tmp/mrpc_output")   # or ".../bert_model.ckpt"
    exporter.save("/tmp/serving/mrpc")
"""

import json
import os
import shutil

from absl import logging
import keras
import tensorflow as tf

from bert_tf.checkpoints import checkpoint_io
from bert_tf.checkpoints import engine_checkpoint
from bert_tf.io_utils import first_line
from bert_tf.io_utils import follow_umask
from bert_tf.io_utils import InputError
from bert_tf.io_utils import make_temp_dir
from bert_tf.tokenizers import tokenization
from bert_tf.tokenizers.loading import load_tokenizer
from bert_tf.tokenizers.tf_text_tokenizer import TfTextTokenizer

# Object-based (Trainer) checkpoints hold this key; TF1 ones do not.
_OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
METADATA_FILE = os.path.join("assets.extra", "export_config.json")


class Option:
  """A task option: becomes `--name` of the export CLI (type from default).
  `minimum`: the smallest value a number may take (integers: counts, so 1
  by default; floats: any finite number unless given)."""

  def __init__(self, name, default, help_text, kind=None, minimum=None):
    self.name = name
    self.default = default
    self.help = help_text
    self.kind = kind or {
      bool: "bool",
      int: "integer",
      float: "float",
      list: "list",
    }.get(type(default), "string")
    if minimum is None and self.kind == "integer":
      minimum = 1
    self.minimum = minimum


# Options more than one task kind takes (a flag is defined once).
LABELS = Option(
  "labels",
  None,
  "classifier/ner: the label list, in label-id order (as the run's --labels).",
  kind="list",
)
LABELS_FILE = Option(
  "labels_file",
  None,
  "classifier/ner: file with one "
  "label a line, in label-id order (run_ner.py writes "
  "label_list.txt).",
)
WINDOWS_PER_CALL = Option(
  "windows_per_call",
  64,
  "squad/ner: windows the model runs at once (bounds memory on long texts).",
)


def read_labels_file(path):
  """The labels of a one-label-a-line file (--labels_file)."""
  try:
    with open(path, encoding="utf-8") as f:
      return [line.rstrip("\n") for line in f if line.strip()]
  except (OSError, UnicodeDecodeError) as e:
    raise InputError("--labels_file=%s: %s" % (path, e)) from e


def float32_outputs(outputs):
  """Floating outputs as float32: an export built under a bfloat16 policy
  (`--dtype=bfloat16`) computes in bfloat16 and answers as a float32 one."""
  return tf.nest.map_structure(
    lambda t: tf.cast(t, tf.float32) if t.dtype.is_floating else t, outputs
  )


def vocab_tokens(vocab_file):
  """The vocab's token of each id, as `FullTokenizer.inv_vocab` gives it."""
  vocab = tokenization.load_vocab(vocab_file)
  tokens = [""] * (max(vocab.values()) + 1)
  for token, index in vocab.items():
    tokens[index] = token
  return tokens


class Exporter:
  """Raw text in, task outputs out; subclasses define the task."""

  NAME = None  # set by @register_exporter
  INPUTS = ("text_a",)
  OPTIONS = ()
  DEFAULT_MAX_SEQ_LENGTH = 128
  # False: the export takes no --checkpoint / --bert_config_file.
  NEEDS_CHECKPOINT = True
  # Padded output -> the output holding each row's real length (for
  # clients such as bert_tf.predict, which trims them).
  PADDED_OUTPUTS = {}

  def __init__(
    self, config, vocab_file, do_lower_case, max_seq_length, options=None
  ):
    config.check_max_seq_length(max_seq_length)
    if max_seq_length < 3:
      raise InputError(
        "--max_seq_length=%d: too short for [CLS] x [SEP]" % max_seq_length
      )
    self.max_seq_length = max_seq_length
    self.config = config
    given = dict(options or {})
    self.options = self.resolve_options(
      {o.name: given.get(o.name, o.default) for o in self.OPTIONS}
    )
    self.tokenizer = self.make_tokenizer(config, vocab_file, do_lower_case)
    self.model = self.build_model(config)
    self._metadata = {
      "task": self.NAME,
      "max_seq_length": max_seq_length,
      "do_lower_case": bool(do_lower_case),
      "vocab_file": os.path.basename(vocab_file),
      "bert_config": config.to_dict(),
    }
    self._metadata["dtype"] = keras.mixed_precision.global_policy().name

  def resolve_options(self, options):
    """Checks (InputError) and completes the task options; returns them."""
    return options

  def make_tokenizer(self, config, vocab_file, do_lower_case):
    """The in-graph tokenizer, after the training scripts' checks: [UNK],
    [CLS], [SEP] present, casing, the vocab against the config (a larger
    one fails every request)."""
    config.check_vocab(
      load_tokenizer(vocab_file, do_lower_case).vocab, vocab_file
    )
    return TfTextTokenizer(vocab_file, do_lower_case)

  def build_model(self, config):
    raise NotImplementedError

  def input_names(self):
    """The signature's string inputs, each of shape [batch]."""
    return self.INPUTS

  def input_shapes(self):
    """{input name: shape}; [batch] unless a task says otherwise."""
    return {name: [None] for name in self.input_names()}

  def serve(self, **inputs):
    """String tensors [batch] by name -> dict of output tensors."""
    raise NotImplementedError

  def tf1_variables(self):
    """Variables that must come from the checkpoint, by original name."""
    return self.model.tf1_variables()

  def engine_object(self):
    """What a Trainer checkpoint's `model` node restores into."""
    return self.model

  def restore(self, checkpoint):
    """Loads every weight from a run's output_dir / `ckpt-N` (engine) or an
    original-format prefix; a weight missing from it is an InputError.
    -> the checkpoint's global step (None if it records none)."""
    prefix = checkpoint_io.resolve_checkpoint(checkpoint)
    checkpoint_io.checkpoint_shapes(prefix)  # an unreadable .index: one line
    try:
      reader = tf.train.load_checkpoint(prefix)
      step = engine_checkpoint.global_step(reader)
      if reader.has_tensor(_OBJECT_GRAPH_KEY):
        engine_checkpoint.restore_engine_checkpoint(
          self.engine_object(), prefix
        )
        report = None
      else:
        report = checkpoint_io.init_from_checkpoint(
          prefix, self.tf1_variables()
        )
    except (
      tf.errors.DataLossError,
      tf.errors.OutOfRangeError,
      tf.errors.NotFoundError,
      IndexError,
    ) as e:  # a cut/damaged file
      raise InputError(
        "--checkpoint=%s: cannot read %s.* (%s: %s)"
        % (
          checkpoint,
          prefix,
          type(e).__name__,
          first_line(getattr(e, "message", e)),
        )
      ) from e
    if report is not None and report.not_in_checkpoint:
      raise InputError(
        "%s: %d weights of the %s model are not in the checkpoint, e.g. "
        "%s (a checkpoint of another task, or no fine-tuned head?)"
        % (
          prefix,
          len(report.not_in_checkpoint),
          self.NAME,
          report.not_in_checkpoint[0],
        )
      )
    self._metadata["checkpoint"] = prefix
    logging.info("restored %s from %s", self.NAME, prefix)
    return step

  def check_batch(self, tensors):
    """The inputs, once they are known to share one batch size (nothing
    computed from them runs before the check)."""
    first = tensors[0]
    checks = [
      tf.debugging.assert_equal(
        tf.shape(first),
        tf.shape(other),
        message="all inputs of a request need the same batch size",
      )
      for other in tensors[1:]
    ]
    with tf.control_dependencies(checks):
      return [tf.identity(t) for t in tensors]

  def encode(self, text_a, text_b=None):
    """Packed model inputs for one text or a pair; an empty text_b row is a
    single text, as in the original."""
    if text_b is None:
      segments = [self.tokenizer(text_a)]
    else:
      text_a, text_b = self.check_batch([text_a, text_b])
      # One tokenizer pass over both texts: half the ops of two.
      ids = self.tokenizer(tf.concat([text_a, text_b], 0))
      half = tf.shape(text_a)[0]
      segments = [ids[:half], ids[half:]]
    return self.tokenizer.pack(segments, self.max_seq_length)

  def model_outputs(self, features, outputs):
    """The model's `outputs` ({name: (dtype, shape after the batch)}) for
    every row of `features`, `windows_per_call` rows at a time, so a
    request of long texts needs the memory of one chunk, not all."""
    chunk = self.options["windows_per_call"]
    total = tf.shape(features["input_ids"])[0]
    names = sorted(outputs)
    arrays = [
      tf.TensorArray(
        outputs[n][0],
        size=(total + chunk - 1) // chunk,
        infer_shape=False,
        element_shape=[None] + list(outputs[n][1]),
      )
      for n in names
    ]

    def step(i, *arrays):
      part = {k: v[i * chunk : (i + 1) * chunk] for k, v in features.items()}
      out = self.model(part, training=False)
      return (i + 1,) + tuple(
        a.write(i, tf.cast(out[n], outputs[n][0]))
        for a, n in zip(arrays, names)
      )

    results = tf.while_loop(
      lambda i, *_: i * chunk < total, step, [0] + arrays, parallel_iterations=1
    )[1:]
    return {n: a.concat() for n, a in zip(names, results)}

  def signature(self, serve=None, shapes=None):
    """A concrete function of `serve` (default: `self.serve`) over string
    inputs of `shapes` (default: `input_shapes()`)."""
    serve = serve or self.serve
    shapes = shapes or self.input_shapes()
    names = list(shapes)
    specs = [tf.TensorSpec(shapes[n], tf.string, name=n) for n in names]

    @tf.function(input_signature=specs)
    def serving_fn(*args):
      # Loaded signatures do not enforce the spec's shape, and a wrong rank
      # would crash tokenizer kernels: check it at run time.
      args = [
        tf.ensure_shape(
          a, shapes[n], name="%s_must_be_%dd" % (n, len(shapes[n]))
        )
        for a, n in zip(args, names)
      ]
      return float32_outputs(serve(**dict(zip(names, args))))

    return serving_fn.get_concrete_function()

  def signatures(self):
    """{signature name: concrete function}, `serving_default` first."""
    return {"serving_default": self.signature()}

  def serving_copy(self):
    """The model the SavedModel serves. A `--dtype=bfloat16` export keeps
    its weights in bfloat16, cast once here: the mixed policy would cast
    every float32 kernel on every request (12% of a single MRPC pair's
    latency: benchmarks/README.md, round 10)."""
    if (
      not self.bfloat16_weights() or self._metadata["dtype"] != "mixed_bfloat16"
    ):
      return self.model
    previous = keras.mixed_precision.global_policy()
    keras.mixed_precision.set_global_policy("bfloat16")
    try:
      copy = self.build_model(self.config)
    finally:
      keras.mixed_precision.set_global_policy(previous)
    pairs = list(zip(copy.weights, self.model.weights))
    if len(copy.weights) != len(self.model.weights) or any(
      new.path != old.path or new.shape != old.shape for new, old in pairs
    ):
      raise RuntimeError("the bfloat16 copy of %s differs" % self.NAME)
    for new, old in pairs:
      new.assign(tf.cast(old.value, new.dtype))
    return copy

  def bfloat16_weights(self):
    """Whether a bfloat16 export stores its weights in bfloat16."""
    return True

  def saved_root(self):
    """The object the SavedModel tracks: weights, vocab."""
    root = tf.Module()
    root.model, root.tokenizer = self.model, self.tokenizer
    return root

  def save(self, export_dir):
    """Writes the SavedModel; `export_dir` appears only when complete."""
    if os.path.exists(export_dir):
      raise InputError(
        "--export_dir=%s already exists (a SavedModel is "
        "never overwritten)" % export_dir
      )
    parent = os.path.dirname(os.path.abspath(export_dir))
    tmp_dir = make_temp_dir(parent, ".export-")
    trained = getattr(self, "model", None)  # TF Hub preprocessors have none
    try:
      if trained is not None:
        self.model = self.serving_copy()
      tf.saved_model.save(
        self.saved_root(), tmp_dir, signatures=self.signatures()
      )
      os.makedirs(os.path.join(tmp_dir, "assets.extra"), exist_ok=True)
      metadata = dict(
        self._metadata,
        options=self.options,
        inputs=list(self.input_names()),
        padded_outputs=self.PADDED_OUTPUTS,
      )
      with open(os.path.join(tmp_dir, METADATA_FILE), "w") as f:
        f.write(json.dumps(metadata, indent=2, sort_keys=True) + "\n")
      follow_umask(tmp_dir)  # TF's files: a serving user must read them.
      os.replace(tmp_dir, export_dir)
    except (OSError, tf.errors.OpError) as e:
      # Name the user's --export_dir, not the hidden folder it is built in.
      why = (
        e.message if isinstance(e, tf.errors.OpError) else e.strerror or str(e)
      )
      raise InputError(
        "--export_dir=%s: %s"
        % (export_dir, first_line(why).replace(tmp_dir, export_dir))
      ) from e
    finally:
      if trained is not None:
        self.model = trained
      shutil.rmtree(tmp_dir, ignore_errors=True)
    logging.info("wrote SavedModel %s", export_dir)
    return export_dir
