r"""Draw a sentence's attention heads as a PNG grid (layers x heads).

    python -m bert_tf.plot_attention --init_checkpoint=RUN_OR_CKPT \
      --bert_config_file=bert_config.json --vocab_file=vocab.txt \
      --text="The cat sat on the mat." --layers=0,-1 --output_file=att.png
    python -m bert_tf.plot_attention \
      --attentions_file=out.jsonl.attentions.npz --line=3 --output_file=a.png

From a checkpoint (an original `bert_model.ckpt` prefix, or a fine-tuning
run's `--output_dir` / `ckpt-N`: its encoder), `--text` [`--text_b`] is
tokenized and packed as `extract_features.py` does and run through the
encoder; or the probabilities `extract_features.py --output_attentions`
stored are read back. Each cell is one head: row = query token, column =
key token, darker = more attention (softmax probabilities, 0..1, one
colour scale for the whole grid). Comparing a checkpoint before and after
fine-tuning: run it twice with the same text.
"""

import collections

from absl import flags
import numpy as np

from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import InputError
from bert_tf.io_utils import require_file
from bert_tf.runtime import app
from bert_tf.runtime import bert_flags
from bert_tf.runtime import flag_checks

# Loaded when the command runs: --help answers at once.
backend_agg = app.lazy_import("matplotlib.backends.backend_agg")
bert_config = app.lazy_import("bert_tf.modeling.bert_config")
bert_encoder = app.lazy_import("bert_tf.modeling.bert_encoder")
checkpoint_io = app.lazy_import("bert_tf.checkpoints.checkpoint_io")
engine_checkpoint = app.lazy_import("bert_tf.checkpoints.engine_checkpoint")
feature_extraction = app.lazy_import("bert_tf.tasks.feature_extraction")
figure_lib = app.lazy_import("matplotlib.figure")
pretrained = app.lazy_import("bert_tf.modeling.pretrained")
tf = app.lazy_import("tensorflow")
tf_text_tokenizer = app.lazy_import("bert_tf.tokenizers.tf_text_tokenizer")
tokenization = app.lazy_import("bert_tf.tokenizers.tokenization")

FLAGS = flags.FLAGS

_OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"  # engine checkpoints
_Feature = collections.namedtuple(
  "_Feature",
  ["unique_id", "tokens", "input_ids", "input_mask", "input_type_ids"],
)
_MAX_LABELLED_TOKENS = 40  # more tick labels than this are unreadable


def define_flags():
  """This command's flags."""
  flags.DEFINE_string("output_file", None, "The PNG to write.")
  flags.DEFINE_string(
    "attentions_file",
    None,
    "An .attentions.npz of "
    "extract_features.py --output_attentions (instead of a "
    "checkpoint).",
  )
  flags.DEFINE_integer(
    "line", 0, "--attentions_file: the line (linex_index) to draw."
  )
  flag_checks.non_negative("line")
  flags.DEFINE_string(
    "init_checkpoint",
    None,
    "An original checkpoint prefix, or a run's --output_dir / ckpt-N.",
  )
  flags.DEFINE_string("bert_config_file", None, "The model's config.")
  bert_flags.define_tokenizer_flags()
  bert_flags.define_max_seq_length(128)
  flags.DEFINE_string("text", None, "The sentence (text_a).")
  flags.DEFINE_string("text_b", None, "Optional second sentence.")
  flags.DEFINE_list(
    "layers",
    None,
    "Layers to draw (-1 = last; default: all of --attentions_file, else -1).",
  )
  flags.DEFINE_list("heads", None, "Heads to draw (default: all).")
  flags.DEFINE_string("title", None, "Figure title.")


def load_encoder(config, checkpoint):
  """The encoder of an original checkpoint or of a Trainer checkpoint."""
  prefix = checkpoint_io.resolve_checkpoint(checkpoint)
  if not tf.train.load_checkpoint(prefix).has_tensor(_OBJECT_GRAPH_KEY):
    return pretrained.load_tf1_model(config, prefix)[0]
  encoder = bert_encoder.BertEncoder(config)
  # Every task model of the engine keeps its encoder as `encoder`.
  engine_checkpoint.restore_engine_checkpoint(
    tf.train.Checkpoint(encoder=encoder), prefix
  )
  return encoder


def text_attentions(
  encoder, vocab_file, do_lower_case, texts, max_seq_length, layers
):
  """(word pieces, attentions [layers, heads, T, T]) of one text or pair."""
  tokenizer = tf_text_tokenizer.TfTextTokenizer(vocab_file, do_lower_case)
  packed = tokenizer.pack(
    [tokenizer(tf.constant([t])) for t in texts], max_seq_length
  )
  inputs = {k: v.numpy()[0] for k, v in packed.items()}
  inverse = tokenization.FullTokenizer(vocab_file, do_lower_case).inv_vocab
  size = int(inputs["input_mask"].sum())
  feature = _Feature(
    0,
    [inverse[i] for i in inputs["input_ids"][:size]],
    inputs["input_ids"],
    inputs["input_mask"],
    inputs["segment_ids"],
  )
  extractor = feature_extraction.FeatureExtractor(
    encoder, layers, output_attentions=True
  )
  _, _, attentions = next(extractor.predict([feature]))
  return feature.tokens, attentions[:, :, :size, :size]


def npz_attentions(path, line, layers):
  """(tokens, attentions [layers, heads, T, T], layer indexes) of a line."""
  try:
    with np.load(path) as data:
      stored = [int(i) for i in data["layers"]]
      tokens = [str(t) for t in data["line_%d_tokens" % line]]
      attentions = data["line_%d_attentions" % line]
  except (OSError, ValueError) as e:
    raise InputError("--attentions_file=%s: unreadable (%s)" % (path, e)) from e
  except KeyError as e:
    raise InputError(
      "--attentions_file=%s: no line %d (or not written by "
      "extract_features.py --output_attentions)" % (path, line)
    ) from e
  if layers is None:
    return tokens, attentions, stored
  missing = [i for i in layers if i not in stored]
  if missing:
    raise InputError(
      "--layers: %d is not in --attentions_file (it has "
      "layers %s)" % (missing[0], stored)
    )
  return tokens, attentions[[stored.index(i) for i in layers]], layers


def draw(tokens, attentions, layers, heads=None, title=None):
  """A Figure: one row per layer, one column per head."""
  heads = list(range(attentions.shape[1])) if heads is None else heads
  for head in heads:
    if not 0 <= head < attentions.shape[1]:
      raise InputError(
        "--heads: %d is out of range for %d heads" % (head, attentions.shape[1])
      )
  rows, columns = len(layers), len(heads)
  cell = 1.6 + 0.08 * min(len(tokens), _MAX_LABELLED_TOKENS)
  figure = figure_lib.Figure(
    figsize=(cell * columns + 0.8, cell * rows + 0.6), layout="constrained"
  )
  backend_agg.FigureCanvasAgg(figure)
  axes = figure.subplots(rows, columns, squeeze=False)
  labelled = len(tokens) <= _MAX_LABELLED_TOKENS
  for r, layer in enumerate(layers):
    for c, head in enumerate(heads):
      ax = axes[r, c]
      image = ax.imshow(
        attentions[r, head],
        cmap="Blues",
        vmin=0.0,
        vmax=1.0,
        interpolation="nearest",
      )
      ax.set_title("layer %d, head %d" % (layer, head), fontsize=8)
      ticks = range(len(tokens)) if labelled else []
      ax.set_xticks(ticks, [tokens[i] for i in ticks], rotation=90, fontsize=6)
      ax.set_yticks(ticks, [tokens[i] for i in ticks], fontsize=6)
  figure.colorbar(image, ax=axes, shrink=0.6, label="attention probability")
  if title:
    figure.suptitle(title)
  return figure


def main(argv):
  del argv
  if not FLAGS.output_file:
    raise InputError("--output_file is required")
  layers = [_int(x, "layers") for x in FLAGS.layers] if FLAGS.layers else None
  heads = [_int(x, "heads") for x in FLAGS.heads] if FLAGS.heads else None
  if FLAGS.attentions_file:
    require_file(FLAGS.attentions_file, "attentions_file")
    tokens, attentions, layers = npz_attentions(
      FLAGS.attentions_file, FLAGS.line, layers
    )
  else:
    for name in ("init_checkpoint", "bert_config_file", "vocab_file", "text"):
      if not FLAGS[name].value:
        raise InputError("--%s is required (or give --attentions_file)" % name)
    require_file(FLAGS.bert_config_file, "bert_config_file")
    require_file(FLAGS.vocab_file, "vocab_file")
    config = bert_config.BertConfig.from_json_file(FLAGS.bert_config_file)
    config.check_max_seq_length(FLAGS.max_seq_length)
    layers = layers or [-1]
    texts = [FLAGS.text] + ([FLAGS.text_b] if FLAGS.text_b else [])
    tokens, attentions = text_attentions(
      load_encoder(config, FLAGS.init_checkpoint),
      FLAGS.vocab_file,
      FLAGS.do_lower_case,
      texts,
      FLAGS.max_seq_length,
      layers,
    )
  figure = draw(tokens, attentions, layers, heads, FLAGS.title)
  with atomic_output(FLAGS.output_file, "wb") as f:
    figure.savefig(f, format="png", dpi=100)
  print("wrote %s" % FLAGS.output_file)


def _int(text, flag):
  try:
    return int(text)
  except ValueError as e:
    raise InputError(
      "--%s=%s: expected comma-separated integers"
      % (flag, getattr(FLAGS, flag))
    ) from e


def run():
  """Console-script entry point."""
  define_flags()
  app.run_app(main)


if __name__ == "__main__":
  run()
