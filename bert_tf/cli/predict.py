r"""Batched raw-text prediction with an exported SavedModel.

    python -m bert_tf.predict --export_dir=/tmp/mrpc_sm \
      --input_file=pairs.jsonl --output_file=predictions.jsonl
    python -m bert_tf.predict --export_dir=/tmp/squad_sm \
      --input_file=questions.tsv --output_file=answers.jsonl --batch_size=8

The input is JSON lines (one object a line) or a TSV file with a header row
(`.tsv`); each record needs every input of the model's `serving_default`
signature by name (`text_a` [, `text_b`]; `question`, `context`; `text`;
`context`, `prefix`, `endings`; see `saved_model_cli show`). An input of
shape [batch, n] (multiple choice `endings`) is a list of strings, in TSV a
JSON list; the records of a batch need lists of one length. The output has
one JSON object a line, in input order: the record's other fields (e.g. an
`id`; with --keep_inputs the inputs too) followed by the model's outputs
(one the record already has a field for, e.g. a gold `label`, is written as
`predicted_label`: the record's field is kept), padded outputs cut to the
row's length (NER `tags` to `num_words`, `entity_*` to `num_entities`, as
the export's assets.extra/export_config.json says). Only TensorFlow and
tensorflow_text are needed, as in serving.
"""

import itertools
import json
import os

from absl import flags
from absl import logging
from tqdm import tqdm

from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import first_line
from bert_tf.io_utils import InputError
from bert_tf.io_utils import require_file
from bert_tf.runtime import app
from bert_tf.runtime import flag_checks

FLAGS = flags.FLAGS
# Loaded when the command runs: --help answers before TensorFlow loads.
tf = app.lazy_import("tensorflow")


def define_flags():
  """This command's flags."""
  flags.DEFINE_string("export_dir", None, "The SavedModel folder.")
  flags.DEFINE_string("input_file", None, "JSON lines, or .tsv with a header.")
  flags.DEFINE_string("output_file", None, "JSON lines out.")
  flags.DEFINE_integer("batch_size", 32, "Records per model call.")
  flag_checks.positive("batch_size")
  flags.DEFINE_bool("progress", True, "Show a progress bar.")
  flags.DEFINE_bool(
    "keep_inputs",
    False,
    "Also copy the model's input fields (e.g. text_a, "
    "text_b) of each record to its output line (its other "
    "fields, e.g. an `id`, are always copied).",
  )


def _lines(path):
  """(line number, text) of a UTF-8 file; a bad line is an InputError."""
  with open(path, "rb") as f:
    for number, raw in enumerate(f, 1):
      try:
        yield number, raw.decode("utf-8-sig" if number == 1 else "utf-8")
      except UnicodeDecodeError as e:
        raise InputError(
          "%s line %d: not UTF-8 (%s)" % (path, number, e)
        ) from e


def read_records(path):
  """Yields (line number, dict) from a JSON-lines or header TSV file."""
  lines = _lines(path)
  if path.endswith(".tsv"):
    first = next(lines, None)
    if first is None:
      raise InputError("%s: empty TSV file (a header row is needed)" % path)
    header = first[1].rstrip("\r\n").split("\t")
    for number, text in lines:
      row = text.rstrip("\r\n").split("\t")
      if len(row) != len(header):
        raise InputError(
          "%s line %d: %d columns, the header has %d"
          % (path, number, len(row), len(header))
        )
      yield number, dict(zip(header, row))
    return
  for number, text in lines:
    if not text.strip():
      continue
    try:
      record = json.loads(text)
    except ValueError as e:
      raise InputError("%s line %d: not JSON (%s)" % (path, number, e)) from e
    except RecursionError:
      raise InputError(
        "%s line %d: JSON nested too deeply" % (path, number)
      ) from None
    if not isinstance(record, dict):
      raise InputError("%s line %d: not a JSON object" % (path, number))
    yield number, record


def _value(record, name, rank, line, path, names):
  """The record's input `name`: a string, or (rank 2) a list of them."""
  value = record.get(name)
  if rank == 2 and isinstance(value, str) and path.endswith(".tsv"):
    try:
      value = json.loads(value)
    except ValueError:
      pass
  if rank == 2:
    ok = (
      isinstance(value, list)
      and value
      and all(isinstance(v, str) for v in value)
    )
  else:
    ok = isinstance(value, str)
  if not ok:
    raise InputError(
      "%s line %d: field %r missing or not %s (the model "
      "takes %s)"
      % (
        path,
        line,
        name,
        "a string" if rank == 1 else "a non-empty list of strings",
        ", ".join(names),
      )
    )
  return value


def _inputs(batch, ranks, path):
  """Column tensors of a batch of (line, record)."""
  names = sorted(ranks)
  columns = {}
  for name in names:
    values = [
      _value(record, name, ranks[name], line, path, names)
      for line, record in batch
    ]
    lengths = [len(v) for v in values]
    if ranks[name] == 2 and len(set(lengths)) > 1:
      i = next(i for i, n in enumerate(lengths) if n != lengths[0])
      raise InputError(
        "%s line %d: %d entries in %r, line %d has %d (the "
        "records of a batch need lists of one length; try "
        "--batch_size=1)"
        % (path, batch[i][0], lengths[i], name, batch[0][0], lengths[0])
      )
    columns[name] = tf.constant(values, tf.string)
  return columns


def _padded_outputs(export_dir):
  """{padded output: its length output} from the export's metadata."""
  path = os.path.join(export_dir, "assets.extra", "export_config.json")
  if not os.path.isfile(path):
    return {}
  try:
    with open(path, encoding="utf-8") as f:
      padded = json.load(f).get("padded_outputs", {})
    if not all(isinstance(v, str) for v in padded.values()):
      raise ValueError("padded_outputs is not {output: length output}")
  except (ValueError, AttributeError, RecursionError) as e:
    raise InputError(
      "%s: damaged export metadata (%s)"
      % (path, first_line(e) or type(e).__name__)
    ) from None
  return padded


# Files of the model folders export_saved_model takes (runs, original and
# HuggingFace layouts): not a SavedModel yet.
_MODEL_FOLDER_FILES = (
  "run_config.json",
  "checkpoint",
  "bert_model.ckpt.index",
  "config.json",
)


def _check_not_a_checkpoint(export_dir):
  """InputError naming the command that makes a SavedModel of a model
  folder given as --export_dir."""
  if os.path.isfile(os.path.join(export_dir, "saved_model.pb")):
    return
  if any(
    os.path.isfile(os.path.join(export_dir, name))
    for name in _MODEL_FOLDER_FILES
  ):
    raise InputError(
      "--export_dir=%s is a model folder, not a SavedModel: export it "
      "first with `python -m bert_tf.export_saved_model --checkpoint=%s "
      "--export_dir=DIR`" % (export_dir, export_dir)
    )


def _plain(value):
  if isinstance(value, list):
    return [_plain(v) for v in value]
  return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def predict(
  export_dir,
  input_file,
  output_file,
  batch_size=32,
  progress=True,
  keep_inputs=False,
):
  """Writes the model's outputs for every record; returns the count.
  `keep_inputs`: the output lines start with the whole record, inputs
  included (else with its fields that are not inputs)."""
  # pylint: disable-next=g-import-not-at-top,unused-import
  import tensorflow_text  # noqa: F401 (registers the ops the model uses)

  _check_not_a_checkpoint(export_dir)
  try:
    serving = tf.saved_model.load(export_dir).signatures["serving_default"]
  except (OSError, KeyError, ValueError) as e:
    raise InputError(
      "--export_dir=%s: no SavedModel with a serving_default "
      "signature (%s)" % (export_dir, first_line(e))
    ) from e
  except (tf.errors.OpError, IndexError) as e:  # variables/ cut, damaged
    raise InputError(
      "--export_dir=%s: cannot load the SavedModel (%s: %s)"
      % (export_dir, type(e).__name__, first_line(getattr(e, "message", e)))
    ) from e
  ranks = {
    name: spec.shape.rank
    for name, spec in serving.structured_input_signature[1].items()
  }
  padded = _padded_outputs(export_dir)
  with open(input_file, "rb") as f:
    total = sum(1 for line in f if line.strip())
  if input_file.endswith(".tsv"):
    total = max(total - 1, 0)
  records = read_records(input_file)
  count = 0
  with (
    atomic_output(output_file) as out,
    tqdm(total=total, unit="rec", disable=not progress) as bar,
  ):
    while True:
      batch = list(itertools.islice(records, batch_size))
      if not batch:
        break
      try:
        outputs = serving(**_inputs(batch, ranks, input_file))
      except tf.errors.InvalidArgumentError as e:
        cause = first_line(e.message)
        if " is not in [0, " in cause:  # an embedding lookup out of range
          cause += (
            "; token ids beyond the model's vocab_size: was it "
            "exported with a larger vocabulary than its config's?"
          )
        raise InputError(
          "%s lines %d-%d: --export_dir=%s rejected the batch "
          "(%s)" % (input_file, batch[0][0], batch[-1][0], export_dir, cause)
        ) from e
      outputs = {k: _plain(v.numpy().tolist()) for k, v in outputs.items()}
      for i, (_, record) in enumerate(batch):
        row = {k: v for k, v in record.items() if keep_inputs or k not in ranks}
        own = {k: v[i] for k, v in outputs.items()}
        for name, length in padded.items():
          own[name] = own[name][: own[length]]
        for name, value in sorted(own.items()):
          # The record's own field (a gold `label`) is kept as it is; the
          # model's output goes beside it as `predicted_<name>`.
          key = name
          while key in row:
            key = "predicted_" + key
          row[key] = value
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
      count += len(batch)
      bar.update(len(batch))
  if not count:
    logging.warning(
      "%s holds no records: wrote an empty %s", input_file, output_file
    )
  return count


def main(argv):
  del argv
  for name in ("export_dir", "output_file"):
    if not FLAGS[name].value:
      raise InputError("--%s is required" % name)
  require_file(FLAGS.input_file, "input_file")
  count = predict(
    FLAGS.export_dir,
    FLAGS.input_file,
    FLAGS.output_file,
    FLAGS.batch_size,
    FLAGS.progress,
    FLAGS.keep_inputs,
  )
  print("wrote %d predictions to %s" % (count, FLAGS.output_file))


def run():
  """Console-script entry point."""
  define_flags()
  app.run_app(main)


if __name__ == "__main__":
  run()
