"""Streams SQuAD examples -> features -> TFRecord + sidecar, optionally in
several processes.

Examples are converted in chunks of whole paragraphs (a paragraph's
questions share one tokenized context). With `num_workers > 1` a process
pool converts the chunks and each worker appends its chunk to the output
files itself, in chunk order, starting at the unique_id the previous chunk
left (`data_prep.common.turns`): the output is identical for any number of
workers, and no feature travels back through a pipe. Remote outputs are
written by one process (a remote file cannot be appended to). TFRecords are
written by `tfrecord_file` without importing TensorFlow (seconds of
start-up; a remote path still goes through tf.io.gfile). Both files are
written atomically.

Example:
    counts = write_squad_features(
        examples, "vocab.txt", True, "eval.tf_record",
        "eval.tf_record.features.jsonl", 384, 128, 64, is_training=False,
        num_workers=2)
    print(counts.examples, counts.features)
"""

import collections
import concurrent.futures
import contextlib
import functools
import gc
import multiprocessing
import sys

from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import is_remote
from bert_tf.records.example_bytes import example_bytes
from bert_tf.records.task_schemas import squad_schema
from bert_tf.records.tfrecord_file import tfrecord_appender
from bert_tf.records.tfrecord_file import tfrecord_writer
from bert_tf.tokenizers.loading import load_tokenizer
from data_prep.common.outputs import die_with_parent
from data_prep.common.turns import Turns
from data_prep.common.turns import wait_in_order
from data_prep.squad import records as squad_records
from data_prep.squad.features import FeatureEncoder
from data_prep.squad.features import FIRST_UNIQUE_ID

Counts = collections.namedtuple("Counts", ["examples", "features"])

_CHUNK_SIZE = 256  # examples per task, rounded up to a paragraph's end
# In a worker: (encoder, examples, write, turns). Forked workers inherit
# the parent's encoder and examples, so chunks travel as index ranges;
# spawned ones get the examples sent.
_worker_state = None


def new_encoder(
  vocab_file,
  do_lower_case,
  max_seq_length,
  doc_stride,
  max_query_length,
  is_training,
  with_sidecar,
  spm_model_file,
  tokenizer=None,
):
  """`tokenizer`: one already loaded for these files (skips reloading)."""
  if tokenizer is None:
    tokenizer = load_tokenizer(vocab_file, do_lower_case, spm_model_file)
  return FeatureEncoder(
    tokenizer,
    max_seq_length,
    doc_stride,
    max_query_length,
    is_training,
    with_sidecar,
  )


# A chunk's features: each one's record entries but unique_ids, and its
# sidecar line after the unique_id (`records.sidecar_tail`; None without a
# sidecar). The writer adds the unique ids.
Converted = collections.namedtuple("Converted", ["records", "sidecar"])


def convert_chunk(encoder, first_index, examples):
  """The examples' features, `Converted`."""
  features = [
    feature
    for offset, example in enumerate(examples)
    for feature in encoder.encode(example, first_index + offset)
  ]
  entries = encoder.schema.entries
  sidecar = None
  if encoder.with_sidecar:
    sidecar = [tail for _, tail in features]
  return Converted([entries(values) for values, _ in features], sidecar)


def _init_worker(encoder_args, paths, turns):
  global _worker_state
  die_with_parent([p for p in paths if p])
  # Forked: the parent's; spawned: None.
  encoder, examples = _worker_state or (new_encoder(*encoder_args), None)
  records, sidecar = paths
  out = _Outputs(
    tfrecord_appender(records),
    open(sidecar, "ab") if sidecar else None,  # pylint: disable=consider-using-with
    encoder.schema,
  )
  _worker_state = (
    encoder,
    examples,
    functools.partial(out.write, flush=True),
    turns,
  )


def _convert_and_write(index, start, stop, chunk):
  encoder, examples, write, turns = _worker_state
  if chunk is None:
    chunk = examples[start:stop]
  turns.run(index, lambda: convert_chunk(encoder, start, chunk), write)
  return stop - start


def chunk_bounds(examples):
  """[(start, stop)]: ~_CHUNK_SIZE examples, never splitting a paragraph
  (its questions share one tokenized context in a worker's cache)."""
  bounds = []
  start = 0
  for i in range(_CHUNK_SIZE, len(examples)):
    if (
      i - start >= _CHUNK_SIZE
      and examples[i].doc_tokens is not examples[i - 1].doc_tokens
    ):
      bounds.append((start, i))
      start = i
  if start < len(examples):
    bounds.append((start, len(examples)))
  return bounds


def _write_in_pool(
  examples, bounds, encoder, encoder_args, num_workers, out, on_done
):
  """Converts and writes the chunks in a pool whose workers append to
  `out`'s files in turn; returns the next unique id."""
  global _worker_state
  # Workers never touch TensorFlow, so forking the parent is safe.
  fork = "fork" in multiprocessing.get_all_start_methods()
  context = multiprocessing.get_context("fork" if fork else "spawn")
  turns = Turns(context, FIRST_UNIQUE_ID)
  out.flush()  # the sidecar's header comes before every worker's lines
  _worker_state = (encoder, examples) if fork else None  # forked workers
  try:
    with concurrent.futures.ProcessPoolExecutor(
      num_workers, context, _init_worker, (encoder_args, out.paths, turns)
    ) as executor:
      futures = [
        executor.submit(
          _convert_and_write,
          i,
          start,
          stop,
          None if fork else examples[start:stop],
        )
        for i, (start, stop) in enumerate(bounds)
      ]
      wait_in_order(executor, futures, on_done)
  finally:
    _worker_state = None
  return turns.total


def _progress_bar(total, progress):
  """tqdm when asked for and stderr is a terminal (tqdm shows no bar
  elsewhere): its import (~20 ms) is a fiftieth of a dev-set conversion."""
  if not progress or not sys.stderr.isatty():
    return contextlib.nullcontext(_NoBar())
  import tqdm  # pylint: disable=g-import-not-at-top

  return tqdm.tqdm(total=total, unit="ex", disable=None)


class _NoBar:
  def update(self, count):
    del count


@contextlib.contextmanager
def gc_paused():
  """Pauses the cycle collector: reading and conversion make millions of
  acyclic objects, and each full collection re-traverses every live
  container (the JSON, the examples, the token caches) -- about a third of
  the conversion time otherwise, and ~15-60 ms of reading the dev set."""
  enabled = gc.isenabled()
  gc.disable()
  try:
    yield
  finally:
    if enabled:
      gc.enable()


def write_squad_features(
  examples,
  vocab_file,
  do_lower_case,
  output_file,
  features_file,
  max_seq_length,
  doc_stride,
  max_query_length,
  is_training,
  num_workers=1,
  progress=False,
  spm_model_file=None,
  tokenizer=None,
):
  """Writes the TFRecord (and the sidecar if `features_file`); -> Counts.

  `spm_model_file`: tokenize with this SentencePiece model instead of
  `vocab_file` (each context word on its own, as with WordPiece).
  `tokenizer`: the one these files give, if the caller loaded it already.
  """
  encoder_args = encoder_settings(
    vocab_file,
    do_lower_case,
    max_seq_length,
    doc_stride,
    max_query_length,
    is_training,
    bool(features_file),
    spm_model_file,
  )
  # Validates the settings and the vocab before any worker starts.
  encoder = new_encoder(*encoder_args, tokenizer=tokenizer)
  if any(is_remote(path) for path in (output_file, features_file) if path):
    num_workers = 1  # a remote file cannot be appended to by the workers
  bounds = chunk_bounds(examples)
  with contextlib.ExitStack() as stack:
    stack.enter_context(gc_paused())
    out = open_outputs(stack, output_file, features_file, encoder_args)
    bar = stack.enter_context(_progress_bar(len(examples), progress))
    if num_workers > 1:
      next_id = _write_in_pool(
        examples, bounds, encoder, encoder_args, num_workers, out, bar.update
      )
    else:
      next_id = FIRST_UNIQUE_ID
      for start, stop in bounds:
        next_id = out.write(
          convert_chunk(encoder, start, examples[start:stop]), next_id
        )
        bar.update(stop - start)
  return Counts(len(examples), next_id - FIRST_UNIQUE_ID)


def encoder_settings(
  vocab_file,
  do_lower_case,
  max_seq_length,
  doc_stride,
  max_query_length,
  is_training,
  with_sidecar,
  spm_model_file=None,
):
  """The picklable arguments of `new_encoder` (sent to workers)."""
  return (
    vocab_file,
    do_lower_case,
    max_seq_length,
    doc_stride,
    max_query_length,
    is_training,
    with_sidecar,
    spm_model_file,
  )


class _Outputs:
  """A TFRecord writer and an optional sidecar file of one output."""

  def __init__(self, writer, sidecar, schema):
    self.writer, self.sidecar, self.schema = writer, sidecar, schema

  @property
  def paths(self):
    """(TFRecord path, sidecar path or None) of the files written."""
    return (
      self.writer.name,
      None if self.sidecar is None else self.sidecar.name,
    )

  def write(self, converted, first_id, flush=False):
    """Writes a `Converted` chunk with unique ids from `first_id` on (and
    with `flush`, hands it to the OS); returns the next id."""
    entries = self.schema.entries
    for i, record in enumerate(converted.records):
      self.writer.write(
        example_bytes([entries({"unique_ids": first_id + i}), record])
      )
    next_id = first_id + len(converted.records)
    if self.sidecar is not None:
      self.sidecar.writelines(
        squad_records.sidecar_lines(converted.sidecar, first_id)
      )
    if flush:
      self.flush()
    return next_id

  def flush(self):
    self.writer.flush()
    if self.sidecar is not None:
      self.sidecar.flush()


def open_outputs(stack, output_file, features_file, encoder_args):
  """Opens the TFRecord (and sidecar, with its header) in an ExitStack:
  both appear, complete, when the stack closes without an exception."""
  (
    _,
    do_lower_case,
    max_seq_length,
    doc_stride,
    max_query_length,
    is_training,
    _,
    _,
  ) = encoder_args
  writer = stack.enter_context(tfrecord_writer(output_file))
  sidecar = None
  if features_file:
    sidecar = stack.enter_context(atomic_output(features_file, "wb"))
    sidecar.write(
      squad_records.sidecar_header(
        max_seq_length=max_seq_length,
        doc_stride=doc_stride,
        max_query_length=max_query_length,
        is_training=is_training,
        do_lower_case=do_lower_case,
      )
    )
  return _Outputs(writer, sidecar, squad_schema(max_seq_length, is_training))
