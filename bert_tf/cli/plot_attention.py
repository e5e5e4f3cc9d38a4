r"""Draw attention heads: a PNG grid, an interactive page, or the change
between two models (heat map, CSV, page).

    python -m bert_tf.plot_attention --init_checkpoint=RUN_OR_CKPT \
      --bert_config_file=bert_config.json --vocab_file=vocab.txt \
      --text="The cat sat on the mat." --layers=0,-1 --output_file=att.png
    python -m bert_tf.plot_attention \
      --attentions_file=out.jsonl.attentions.npz --output_file=att.html
    python -m bert_tf.plot_attention --init_checkpoint=PRETRAINED \
      --compare_checkpoint=RUN ... --input_file=pairs.txt \
      --output_file=change.html  # or change.png, + --divergence_file=x.csv

From a checkpoint (an original `bert_model.ckpt` prefix, or a fine-tuning
run's `--output_dir` / `ckpt-N`: its encoder), `--text` [`--text_b`] or
each line of `--input_file` (`A ||| B` for a pair) is packed as
`extract_features.py` packs it and run through the encoder; or the
probabilities `extract_features.py --output_attentions` stored are read
back (checked: a damaged or tampered file is refused). `--output_file`
ending in .html (or `--format=html`) writes the page (bert_tf/attention/
page.py); a PNG is the grid of one input, or with a second model the
per-head change (Jensen-Shannon divergence, bert_tf/attention/
divergence.py) as a heat map.
"""

import os

from absl import flags

from bert_tf.attention import maps as maps_lib
from bert_tf.attention import page
from bert_tf.cli import attention_sources
from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import InputError
from bert_tf.io_utils import is_remote
from bert_tf.io_utils import require_file
from bert_tf.runtime import app
from bert_tf.runtime import bert_flags
from bert_tf.runtime import flag_checks

# Loaded when the command runs (scipy, matplotlib): --help answers at once.
divergence = app.lazy_import("bert_tf.attention.divergence")
figures = app.lazy_import("bert_tf.attention.figures")

FLAGS = flags.FLAGS

# What this command reads, and what it writes (checked against each other).
_INPUT_FILES = (
  "attentions_file",
  "compare_attentions_file",
  "input_file",
  "vocab_file",
  "bert_config_file",
)
_CHECKPOINTS = ("init_checkpoint", "compare_checkpoint")
_OUTPUTS = ("output_file", "divergence_file")


def define_flags():
  """This command's flags."""
  flags.DEFINE_string(
    "output_file", None, "The PNG, or the page (.html), to write."
  )
  flags.DEFINE_enum(
    "format",
    None,
    ["png", "html"],
    "What --output_file is (default: html for a .html/.htm name, else png).",
  )
  flags.DEFINE_string(
    "attentions_file",
    None,
    "An .attentions.npz of extract_features.py --output_attentions "
    "(instead of a checkpoint).",
  )
  flags.DEFINE_string(
    "compare_attentions_file",
    None,
    "A second .npz of the same lines from another model: draw the change.",
  )
  flags.DEFINE_integer(
    "line",
    None,
    "--attentions_file: the line (linex_index) to draw (default: the first "
    "for a PNG, every line for a page).",
  )
  flag_checks.non_negative("line")
  flags.DEFINE_string(
    "init_checkpoint",
    None,
    "An original checkpoint prefix, or a run's --output_dir / ckpt-N.",
  )
  flags.DEFINE_string(
    "compare_checkpoint",
    None,
    "A second checkpoint of the same model (e.g. the fine-tuned run of "
    "--init_checkpoint): draw the change of each head.",
  )
  flags.DEFINE_string("bert_config_file", None, "The model's config.")
  bert_flags.define_tokenizer_flags()
  bert_flags.define_max_seq_length(128)
  flags.DEFINE_string("text", None, "The sentence (text_a).")
  flags.DEFINE_string("text_b", None, "Optional second sentence.")
  flags.DEFINE_string(
    "input_file",
    None,
    "Instead of --text: one input per line, `A ||| B` for a pair (as "
    "extract_features.py reads them).",
  )
  flags.DEFINE_list(
    "layers",
    None,
    "Layers to draw (-1 = last; default: all for a page or a comparison, "
    "all of --attentions_file, else the last).",
  )
  flags.DEFINE_list("heads", None, "PNG grid: the heads to draw (default all).")
  flags.DEFINE_string("title", None, "Figure or page title.")
  flags.DEFINE_string(
    "divergence_file",
    None,
    "With a second model: also write each head's change as CSV (layer, "
    "head, mean and max Jensen-Shannon divergence over the inputs).",
  )


def _is_page():
  if FLAGS.format:
    return FLAGS.format == "html"
  return FLAGS.output_file.lower().endswith((".html", ".htm"))


def _check_flags(page_wanted):
  """One line for a combination that cannot take effect."""
  given = lambda *names: [n for n in names if FLAGS[n].value is not None]
  npz, model = given("attentions_file"), given("init_checkpoint")
  if npz and model:
    raise InputError("--attentions_file and --init_checkpoint: give one")
  if not npz and not model:
    raise InputError("--init_checkpoint (or --attentions_file) is required")
  alien = (
    given("compare_checkpoint", "text", "text_b", "input_file")
    if npz
    else given("compare_attentions_file", "line")
  )
  if alien:
    raise InputError(
      "--%s does not apply with --%s"
      % (alien[0], "attentions_file" if npz else "init_checkpoint")
    )
  compare = given("compare_checkpoint", "compare_attentions_file")
  if FLAGS.divergence_file and not compare:
    raise InputError(
      "--divergence_file needs a second model (--compare_checkpoint or "
      "--compare_attentions_file)"
    )
  if FLAGS.heads and (page_wanted or compare):
    raise InputError(
      "--heads applies to the PNG grid of one model (the page and the "
      "comparison show every head)"
    )
  if model and bool(FLAGS.text) == bool(FLAGS.input_file):
    raise InputError("give --text (and --text_b) or --input_file")
  if FLAGS.text_b and not FLAGS.text:
    raise InputError("--text_b needs --text")


def _identity(path):
  try:
    stat = os.stat(path)
    return stat.st_dev, stat.st_ino
  except OSError:
    return os.path.realpath(path)


def _check_outputs():
  """No output on a file this command reads, or inside a checkpoint it
  loads (the runner checks --output_file against the shared input flags;
  these are this command's own)."""
  reads = {}
  for name in _INPUT_FILES:
    if FLAGS[name].value:
      reads.setdefault(_identity(FLAGS[name].value), "--" + name)
  outputs = [n for n in _OUTPUTS if FLAGS[n].value]
  for n, name in enumerate(outputs):
    path = FLAGS[name].value
    for other in outputs[:n]:
      if _identity(FLAGS[other].value) == _identity(path):
        raise InputError("--%s and --%s name the same file" % (other, name))
    if _identity(path) in reads:
      raise InputError(
        "--%s=%s is the same file as %s: refusing to overwrite an input"
        % (name, path, reads[_identity(path)])
      )
    for checkpoint in _CHECKPOINTS:
      value = FLAGS[checkpoint].value
      if value and attention_sources.is_part_of(path, value):
        raise InputError(
          "--%s=%s is part of --%s=%s: refusing to write into an input"
          % (name, path, checkpoint, value)
        )


def _ints(flag):
  try:
    return [int(x) for x in FLAGS[flag].value]
  except ValueError as e:
    raise InputError(
      "--%s=%s: expected comma-separated integers"
      % (flag, ",".join(FLAGS[flag].value))
    ) from e


def _read(page_wanted, layers):
  """(before, after or None) from the flags."""
  if FLAGS.attentions_file:
    lines = None if page_wanted and FLAGS.line is None else [FLAGS.line or 0]
    require_file(FLAGS.attentions_file, "attentions_file")
    found = [maps_lib.read_npz(FLAGS.attentions_file, lines)]
    if FLAGS.compare_attentions_file:
      require_file(FLAGS.compare_attentions_file, "compare_attentions_file")
      found.append(
        maps_lib.read_npz(
          FLAGS.compare_attentions_file, lines, "compare_attentions_file"
        )
      )
    found = [attention_sources.select_layers(m, layers) for m in found]
  else:
    compare = FLAGS.compare_checkpoint
    if layers is None and not (page_wanted or compare):
      layers = [-1]
    found = attention_sources.from_checkpoints(
      FLAGS, [FLAGS.init_checkpoint] + ([compare] if compare else []), layers
    )
  return found[0], (found[1] if len(found) > 1 else None)


def main(argv):
  del argv
  if not FLAGS.output_file:
    raise InputError("--output_file is required")
  page_wanted = _is_page()
  _check_flags(page_wanted)
  _check_outputs()
  layers = _ints("layers") if FLAGS.layers else None
  heads = _ints("heads") if FLAGS.heads else None
  before, after = _read(page_wanted, layers)
  per_input = None
  if after is not None:
    maps_lib.check_comparable(before, after)
    per_input = divergence.head_divergence(before, after)
  names = [before.layer_name(i) for i in range(len(before.layers))]
  if FLAGS.divergence_file:
    with atomic_output(FLAGS.divergence_file) as f:
      divergence.write_csv(f, before, per_input)
  if page_wanted:
    sources = [before] + ([after] if after else [])
    labels = [m.source for m in sources]
    with atomic_output(FLAGS.output_file) as f:
      f.write(page.build(sources, labels, per_input, FLAGS.title))
  else:
    if after is None:
      example = before.examples[0]
      figure = figures.grid(
        example.tokens, example.attentions, names, heads, FLAGS.title
      )
    else:
      figure = figures.heatmap(per_input.mean(0), names, FLAGS.title)
    with atomic_output(FLAGS.output_file, "wb") as f:
      figure.savefig(f, format="png", dpi=figures.DPI)
  for name in _OUTPUTS:
    if FLAGS[name].value:
      print("wrote %s%s" % (FLAGS[name].value, _size(FLAGS[name].value)))
  if per_input is not None:
    print(divergence.summary(before, per_input))


def _size(path):
  return "" if is_remote(path) else " (%d bytes)" % os.path.getsize(path)


def run():
  """Console-script entry point."""
  define_flags()
  app.run_app(main)


if __name__ == "__main__":
  run()
