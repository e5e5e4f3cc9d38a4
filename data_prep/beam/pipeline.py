"""Runs a data_prep job as an Apache Beam pipeline: flags, options, errors.

`--runner=DirectRunner` (or DataflowRunner, FlinkRunner, SparkRunner,
PortableRunner) runs the job's per-shard steps in Beam; every other Beam
pipeline option on the command line passes through (`--direct_num_workers=2
--direct_running_mode=multi_processing`, `--project`, `--region`,
`--temp_location`, ...). Without `--runner` the job keeps its faithful
single-process path. Shards are written under temporary names and renamed
in by the launcher once the pipeline has succeeded (data_prep/common/
outputs.py), so a failed run leaves no complete-looking output. A bad record
fails the run with the job's own one-line message, unwrapped from Beam's.

Example:
    counters = run(lambda p: p | beam.Create([1, 2]) | beam.Map(work),
                   "DirectRunner", ["--direct_num_workers=2"])
    counters["documents"]
"""

import logging
import re

from absl import flags

from bert_tf.io_utils import error_line
from bert_tf.io_utils import InputError
from bert_tf.io_utils import user_path
from bert_tf.runtime import app
from bert_tf.runtime import flag_checks
from bert_tf.runtime import quiet
from data_prep.common.outputs import publish
from data_prep.common.outputs import remove

NAMESPACE = "bert_tf"
RUNNERS = (
  "DirectRunner",
  "DataflowRunner",
  "FlinkRunner",
  "SparkRunner",
  "PortableRunner",
  "PrismRunner",
)
_INPUT_ERROR = re.compile(r"InputError: (.+)$", re.MULTILINE)
_WHILE_RUNNING = re.compile(r" \[while running .*\]$")
_OS_ERROR = re.compile(r"OSError: \[Errno \d+\] ([^:\n]+): '([^'\n]+)'")


def define_runner_flags(shards_help):
  """--runner and --num_output_shards."""
  flags.DEFINE_enum(
    "runner",
    None,
    list(RUNNERS),
    "Run as an Apache Beam pipeline on this runner; other Beam pipeline "
    "options pass through (e.g. --direct_num_workers=2 "
    "--direct_running_mode=multi_processing, --project, --region, "
    "--temp_location). Default: the single-process path.",
  )
  flags.DEFINE_integer(
    "num_output_shards", None, "With --runner: " + shards_help
  )
  flag_checks.positive("num_output_shards")


def parse_flags(argv):
  """absl flags parser that leaves unknown flags to Beam (`run_app(main,
  parse_flags)`); `check_beam_args` refuses them without --runner, and
  those Beam does not know either."""
  return app.parse_flags(argv, known_only=True)


def check_beam_args(argv):
  """The pass-through arguments; an InputError if there is no --runner or
  one is not a Beam pipeline option (Beam itself would only log a warning
  and run without it: a mistyped --direct_num_workers, say)."""
  extra = list(argv[1:])
  if extra and not flags.FLAGS.runner:
    raise InputError(
      "unknown flag or argument %s (Beam pipeline options "
      "need --runner)" % extra[0]
    )
  if flags.FLAGS.runner:
    require_beam()
  elif flags.FLAGS["num_output_shards"].present:  # Else silently one file.
    raise InputError(
      "--num_output_shards=%d needs --runner (without it the "
      "job writes --output_file as before)" % flags.FLAGS.num_output_shards
    )
  if extra:
    # pylint: disable-next=g-import-not-at-top
    from apache_beam.options.pipeline_options import PipelineOptions

    known = PipelineOptions([]).get_all_options()
    unknown = set(
      PipelineOptions(extra).get_all_options(retain_unknown_options=True)
    ) - set(known)
    for arg in extra:
      name = arg.split("=", 1)[0].lstrip("-").replace("-", "_")
      if arg.startswith("-") and name in unknown:
        raise InputError(
          "%s: neither a flag of this command nor a Beam pipeline option" % arg
        )
  return extra


def require_beam():
  """InputError saying how to install Apache Beam (an extra) if it is not."""
  try:
    import apache_beam  # noqa: F401  pylint: disable=g-import-not-at-top
  except ImportError as e:
    raise InputError(
      "--runner needs Apache Beam, which is not installed: pip install -e "
      "'.[beam]' (or pip install -r requirements-beam.txt)"
    ) from e


class PerWorker:
  """A picklable step `fn(state, element)` whose costly state (a tokenizer,
  an encoder) is built by `make(*args)` once per worker, on first use."""

  def __init__(self, fn, make, *args):
    self.fn, self.make, self.args = fn, make, args
    self._state = None

  def __call__(self, element):
    if self._state is None:
      self._state = self.make(*self.args)
    return self.fn(self._state, element)


def counter(name):
  import apache_beam as beam  # pylint: disable=g-import-not-at-top

  return beam.metrics.Metrics.counter(NAMESPACE, name)


def _user_error(error):
  """The InputError behind a pipeline failure (or the OSError of a full
  disk, a read-only folder...: named by the user's path), or None for a
  bug."""
  seen = error
  while seen is not None and not isinstance(seen, (InputError, OSError)):
    seen = seen.__cause__ or seen.__context__
  if isinstance(seen, OSError):
    return InputError(error_line(seen))
  if seen is not None:  # Beam appends " [while running 'Step']"
    return InputError(_WHILE_RUNNING.sub("", str(seen)))
  # Runners that only pass the remote traceback's text.
  match = _INPUT_ERROR.search(str(error))
  if match:
    return InputError(_WHILE_RUNNING.sub("", match.group(1)))
  match = _OS_ERROR.search(str(error))
  return (
    InputError("%s: %s" % (user_path(match.group(2)), match.group(1)))
    if match
    else None
  )


def run_and_publish(build, runner, beam_args, temps, finals, *output_files):
  """`run`, then the shards written to `temps` get their `finals` names
  (after an earlier run's shards of `output_files` are removed); on failure
  the temps are removed. Returns the counters."""
  try:
    counters = run(build, runner, beam_args)
  except BaseException:
    remove(temps)
    raise
  publish(temps, finals, *output_files)
  return counters


def run(build, runner, beam_args):
  """Builds the pipeline with `build(pipeline)`, runs it to the end and
  returns its counters {name: value}."""
  # pylint: disable=g-import-not-at-top
  import apache_beam as beam
  from apache_beam.options.pipeline_options import PipelineOptions
  from apache_beam.runners.portability.fn_api_runner import FnApiRunner

  # pylint: enable=g-import-not-at-top
  options = PipelineOptions(["--runner=" + runner] + list(beam_args))
  # Beam's DirectRunner first tries Prism, a binary it downloads at run
  # time; its local fallback, the FnApiRunner, is what DirectRunner means
  # here (and it honours --direct_num_workers / --direct_running_mode).
  pipeline = beam.Pipeline(
    runner=FnApiRunner() if runner == "DirectRunner" else None, options=options
  )
  build(pipeline)
  # A bad record is reported once, as our one line, not also as the
  # worker's logged traceback.
  worker_log = logging.getLogger("apache_beam.runners")
  level = worker_log.level
  worker_log.setLevel(logging.CRITICAL)
  try:
    with quiet.quiet_beam_workers():
      result = pipeline.run()
      result.wait_until_finish()
  except Exception as e:  # pylint: disable=broad-except
    user_error = _user_error(e)
    if user_error is None:
      raise
    raise user_error from None
  finally:
    worker_log.setLevel(level)
  counters = {}
  for result_counter in result.metrics().query()["counters"]:
    value = result_counter.committed
    if value is None:
      value = result_counter.attempted
    counters[result_counter.key.metric.name] = value
  return counters
