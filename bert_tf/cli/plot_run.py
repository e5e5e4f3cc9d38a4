"""Plot a training run: loss, learning rate, throughput and eval metrics.

    python -m bert_tf.plot_run --output_dir=/tmp/mrpc_output
    python -m bert_tf.plot_run --output_dir=RUN --output_file=run.png \
      --title="MRPC, MiniLM"

Reads the scalars the Trainer writes into `output_dir` (TensorBoard event
files `events.out.tfevents.*`: `loss`, `learning_rate`, `examples_per_sec`,
...; the original Estimator's `simple_value` events too) and, if present,
`eval_history.jsonl` (one JSON object per evaluation: `global_step` and
metrics such as `eval_accuracy`, `eval_loss`). Writes one PNG, by default
`output_dir/training_plot.png`: one panel per scalar, eval loss drawn over
the training loss, a smoothed line over a noisy training curve. A run with
`best/best.json` (--best_metric) gets its best step marked on every panel.
"""

import collections
import glob
import math
import os

from absl import flags
import numpy as np

from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import InputError
from bert_tf.runtime import app

# Loaded when the command runs: --help answers at once.
backend_agg = app.lazy_import("matplotlib.backends.backend_agg")
figure_lib = app.lazy_import("matplotlib.figure")
run_files = app.lazy_import("bert_tf.runs.run_files")
signal = app.lazy_import("scipy.signal")
tf = app.lazy_import("tensorflow")

FLAGS = flags.FLAGS

DEFAULT_OUTPUT = "training_plot.png"
# Same curve as examples_per_sec, scaled by the batch size.
_HIDDEN_TAGS = ("steps_per_sec",)

# train, eval: tag -> (steps, values), both sorted by step; best: the
# contents of best/best.json ({"metric", "value", "global_step", ...}) or
# None.
RunData = collections.namedtuple(
  "RunData", ["train", "eval", "best"], defaults=[None]
)


def define_flags():
  """Defines this command's flags."""
  flags.DEFINE_string("output_dir", None, "The run's --output_dir.")
  flags.DEFINE_string(
    "output_file",
    None,
    "PNG to write (default: output_dir/%s)." % DEFAULT_OUTPUT,
  )
  flags.DEFINE_string(
    "title", None, "Figure title (default: the output_dir path)."
  )


def _scalar(value):
  """The float of a scalar Summary.Value, or None for images, histograms."""
  if value.HasField("simple_value"):
    return float(value.simple_value)
  if value.HasField("tensor"):
    array = tf.make_ndarray(value.tensor)
    if array.ndim == 0 and np.issubdtype(array.dtype, np.number):
      return float(array)
  return None


def _series(points):
  """{tag: {step: value}} -> {tag: (steps, values)} sorted by step."""
  return {
    tag: tuple(map(list, zip(*sorted(by_step.items()))))
    for tag, by_step in sorted(points.items())
  }


def read_train_scalars(output_dir):
  """{tag: (steps, values)} from every event file of `output_dir`.

  A step written twice (a run resumed from an earlier checkpoint) keeps the
  value of the newest file.
  """
  points = collections.defaultdict(dict)
  # Names are events.out.tfevents.<unix time>...: sorted = oldest first.
  for path in sorted(
    glob.glob(os.path.join(output_dir, "events.out.tfevents.*"))
  ):
    try:
      # Records of Event protos (summary_iterator is deprecated and says so).
      for record in tf.data.TFRecordDataset(path):
        event = tf.compat.v1.Event.FromString(record.numpy())
        for value in event.summary.value:
          scalar = _scalar(value)
          if scalar is not None:
            points[value.tag][event.step] = scalar
    except tf.errors.OpError as e:
      raise InputError(
        "%s: corrupt or truncated event file (%s)"
        % (path, str(e).splitlines()[0])
      ) from e
  return _series(points)


def read_eval_history(path):
  """{metric: (steps, values)} from an eval_history.jsonl file."""
  points = collections.defaultdict(dict)
  for record in run_files.read_history(path):
    for key, value in record.items():
      # Numbers only: a record may also name e.g. its checkpoint.
      if (
        key != "global_step"
        and isinstance(value, (int, float))
        and not isinstance(value, bool)
      ):
        points[key][record["global_step"]] = float(value)
  return _series(points)


def read_run(output_dir):
  """The run's training scalars and eval metrics, as a RunData."""
  if not os.path.isdir(output_dir):
    raise InputError("--output_dir=%s: no such folder" % output_dir)
  run = RunData(
    read_train_scalars(output_dir),
    read_eval_history(os.path.join(output_dir, run_files.HISTORY_FILE)),
    run_files.read_best(os.path.join(output_dir, run_files.BEST_DIR)),
  )
  if not run.train and not run.eval:
    raise InputError(
      "%s: no scalars in TensorBoard event files "
      "(events.out.tfevents.*) and no %s" % (output_dir, run_files.HISTORY_FILE)
    )
  return run


def smooth(values, weight=None):
  """TensorBoard's debiased exponential moving average; the default weight
  averages over about 1/30 of the curve, whatever its length."""
  if weight is None:
    weight = max(0.0, 1.0 - 30.0 / len(values))
  ema = lambda x: signal.lfilter([1 - weight], [1, -weight], x)
  return ema(np.asarray(values, np.float64)) / ema(np.ones(len(values)))


def _panels(run):
  """[(title, [(label, steps, values, is_eval)])] in reading order."""
  train = {t: s for t, s in run.train.items() if t not in _HIDDEN_TAGS}
  evals = dict(run.eval)
  if "eval_loss" in evals:
    # The classifier's `loss` is the Estimator's batch mean of eval_loss.
    evals.pop("loss", None)
  order = ["loss", "learning_rate"] + sorted(
    set(train) - {"loss", "learning_rate"}
  )
  panels = []
  for tag in order:
    if tag in train:
      series = [(tag, *train[tag], False)]
      if tag == "loss" and "eval_loss" in evals:
        series.append(("eval_loss", *evals.pop("eval_loss"), True))
      panels.append((tag, series))
  panels += [(tag, [(tag, *evals[tag], True)]) for tag in sorted(evals)]
  return panels


def _mark_best(axes, panels, best):
  """A dashed line at the best step on every panel; a star on the best
  metric's point."""
  step = int(best["global_step"])
  for ax, (_, series) in zip(axes, panels):
    ax.axvline(step, color="tab:green", ls="--", lw=1, alpha=0.7)
    for label, _, _, is_eval in series:
      if is_eval and label == best["metric"]:
        ax.plot(
          [step],
          [float(best["value"])],
          "*",
          color="tab:green",
          ms=14,
          label="best %.4g at step %d" % (float(best["value"]), step),
        )
        ax.legend(fontsize=8)


def plot_run(run, path, title):
  """Draws `run` (a RunData) into the PNG `path`."""
  panels = _panels(run)
  columns = 1 if len(panels) == 1 else 2
  rows = math.ceil(len(panels) / columns)
  figure = figure_lib.Figure(
    figsize=(6.4 * columns, 3.0 * rows + 0.6), layout="constrained"
  )
  backend_agg.FigureCanvasAgg(figure)
  axes = figure.subplots(rows, columns, sharex=True, squeeze=False).ravel()
  for ax, (name, series) in zip(axes, panels):
    for label, steps, values, is_eval in series:
      if is_eval:
        ax.plot(steps, values, "o-", color="tab:orange", label=label)
      elif label == "loss" and len(values) > 30:  # Noisy: show the trend.
        ax.plot(steps, values, color="tab:blue", alpha=0.3, lw=1)
        ax.plot(
          steps, smooth(values), color="tab:blue", label=label + " (smoothed)"
        )
      else:
        ax.plot(
          steps,
          values,
          ".-" if len(values) <= 30 else "-",
          color="tab:blue",
          label=label,
        )
    ax.set_title(
      "; ".join(
        "%s %.4g at step %d" % (label, values[-1], steps[-1])
        for label, steps, values, _ in series
      ),
      loc="left",
      fontsize=10,
    )
    ax.ticklabel_format(axis="y", style="sci", scilimits=(-3, 4))
    ax.grid(alpha=0.3)
    if len(series) > 1:
      ax.legend(fontsize=8)
  if run.best:
    _mark_best(axes[: len(panels)], panels, run.best)
  for ax in axes[len(panels) :]:
    figure.delaxes(ax)
  for ax in axes[: len(panels)][-columns:]:
    ax.set_xlabel("step")
    ax.xaxis.set_tick_params(labelbottom=True)
  figure.suptitle(title)
  with atomic_output(path, "wb") as f:
    figure.savefig(f, format="png", dpi=100)


def main(argv):
  del argv
  if not FLAGS.output_dir:
    raise InputError("--output_dir is required")
  output_file = FLAGS.output_file or os.path.join(
    FLAGS.output_dir, DEFAULT_OUTPUT
  )
  if os.path.exists(output_file) and not output_file.lower().endswith(".png"):
    # e.g. a run file named by mistake: a plot never replaces it.
    raise InputError(
      "--output_file=%s exists and is not a .png: refusing to "
      "overwrite it" % output_file
    )
  plot_run(
    read_run(FLAGS.output_dir),
    output_file,
    FLAGS.title or os.path.abspath(FLAGS.output_dir),
  )
  print(output_file)


def run():
  """Console-script entry point."""
  define_flags()
  app.run_app(main)


if __name__ == "__main__":
  run()
