"""Streams SQuAD examples -> features -> TFRecord + sidecar, optionally in
several processes.

Examples are converted in chunks of whole paragraphs (a paragraph's
questions share one tokenized context); with `num_workers > 1` the chunks go
to a forked process pool and come back in submission order (at most a few
chunks in flight, so memory does not grow with the number of features). The
parent assigns `unique_id`s in order and writes, so the output is identical
for any number of workers. TFRecords are written by `tfrecord_file` without
importing TensorFlow (seconds of start-up; a remote path still goes through
tf.io.gfile). Both files are written atomically.

Example:
    counts = write_squad_features(
        examples, "vocab.txt", True, "eval.tf_record",
        "eval.tf_record.features.jsonl", 384, 128, 64, is_training=False,
        num_workers=2)
    print(counts.examples, counts.features)
"""

import collections
import contextlib
import gc
import multiprocessing
import sys

from bert_tf.io_utils import atomic_output
from bert_tf.records.example_bytes import example_bytes
from bert_tf.records.task_schemas import squad_schema
from bert_tf.records.tfrecord_file import tfrecord_writer
from bert_tf.tokenizers.loading import load_tokenizer
from data_prep.common.outputs import die_with_parent
from data_prep.squad import records as squad_records
from data_prep.squad.features import FeatureEncoder
from data_prep.squad.features import FIRST_UNIQUE_ID

Counts = collections.namedtuple("Counts", ["examples", "features"])

_CHUNK_SIZE = 256  # examples per task, rounded up to a paragraph's end
# In a worker: (encoder, examples). Forked workers inherit the parent's,
# so chunks travel as index ranges; spawned ones get the examples sent.
_worker_state = None


def new_encoder(vocab_file, do_lower_case, max_seq_length, doc_stride,
                 max_query_length, is_training, with_sidecar, spm_model_file,
                 tokenizer=None):
  """`tokenizer`: one already loaded for these files (skips reloading)."""
  if tokenizer is None:
    tokenizer = load_tokenizer(vocab_file, do_lower_case, spm_model_file)
  return FeatureEncoder(tokenizer, max_seq_length, doc_stride,
                        max_query_length, is_training, with_sidecar)


def convert_chunk(encoder, first_index, examples):
  """[(record entries but unique_ids, sidecar tail)] of the examples'
  features; the parent adds the unique ids."""
  entries = encoder.schema.entries
  return [(entries(values), tail)
          for offset, example in enumerate(examples)
          for values, tail in encoder.encode(example, first_index + offset)]


def _init_worker(encoder_args):
  global _worker_state
  die_with_parent()
  if _worker_state is None:  # spawned, not forked
    _worker_state = (new_encoder(*encoder_args), None)


def _convert_in_worker(start, stop, chunk):
  encoder, examples = _worker_state
  return convert_chunk(encoder, start,
                  examples[start:stop] if chunk is None else chunk)


def chunk_bounds(examples):
  """[(start, stop)]: ~_CHUNK_SIZE examples, never splitting a paragraph
  (its questions share one tokenized context in a worker's cache)."""
  bounds = []
  start = 0
  for i in range(_CHUNK_SIZE, len(examples)):
    if (i - start >= _CHUNK_SIZE and
        examples[i].doc_tokens is not examples[i - 1].doc_tokens):
      bounds.append((start, i))
      start = i
  if start < len(examples):
    bounds.append((start, len(examples)))
  return bounds


def _converted_chunks(examples, encoder, encoder_args, num_workers):
  """Yields (num_examples, converted) per chunk, in order."""
  bounds = chunk_bounds(examples)
  if num_workers <= 1:
    for start, stop in bounds:
      yield stop - start, convert_chunk(encoder, start, examples[start:stop])
    return
  # Workers never touch TensorFlow, so forking the parent is safe.
  global _worker_state
  fork = "fork" in multiprocessing.get_all_start_methods()
  context = multiprocessing.get_context("fork" if fork else "spawn")
  _worker_state = (encoder, examples) if fork else None
  try:
    pool = context.Pool(num_workers, _init_worker, (encoder_args,))
  finally:
    _worker_state = None
  with pool:
    pending = collections.deque()
    for start, stop in bounds:
      task = (start, stop, None if fork else examples[start:stop])
      pending.append((stop - start, pool.apply_async(_convert_in_worker, task)))
      if len(pending) > 2 * num_workers:
        size, result = pending.popleft()
        yield size, result.get()
    while pending:
      size, result = pending.popleft()
      yield size, result.get()


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


def write_squad_features(examples, vocab_file, do_lower_case, output_file,
                         features_file, max_seq_length, doc_stride,
                         max_query_length, is_training, num_workers=1,
                         progress=False, spm_model_file=None, tokenizer=None):
  """Writes the TFRecord (and the sidecar if `features_file`); -> Counts.

  `spm_model_file`: tokenize with this SentencePiece model instead of
  `vocab_file` (each context word on its own, as with WordPiece).
  `tokenizer`: the one these files give, if the caller loaded it already.
  """
  encoder_args = encoder_settings(vocab_file, do_lower_case, max_seq_length,
                                  doc_stride, max_query_length, is_training,
                                  bool(features_file), spm_model_file)
  # Validates the settings and the vocab before any worker starts.
  encoder = new_encoder(*encoder_args, tokenizer=tokenizer)
  unique_id = FIRST_UNIQUE_ID
  with contextlib.ExitStack() as stack:
    stack.enter_context(gc_paused())
    out = open_outputs(stack, output_file, features_file, encoder_args)
    bar = stack.enter_context(_progress_bar(len(examples), progress))
    for num_examples, converted in _converted_chunks(examples, encoder,
                                                     encoder_args,
                                                     num_workers):
      unique_id = out.write(converted, unique_id)
      bar.update(num_examples)
  return Counts(len(examples), unique_id - FIRST_UNIQUE_ID)


def encoder_settings(vocab_file, do_lower_case, max_seq_length, doc_stride,
                     max_query_length, is_training, with_sidecar,
                     spm_model_file=None):
  """The picklable arguments of `new_encoder` (sent to workers)."""
  return (vocab_file, do_lower_case, max_seq_length, doc_stride,
          max_query_length, is_training, with_sidecar, spm_model_file)


class _Outputs:
  """A TFRecord writer and an optional sidecar file of one output."""

  def __init__(self, writer, sidecar, schema):
    self.writer, self.sidecar, self.schema = writer, sidecar, schema

  def write(self, converted, first_id):
    """Writes converted features with unique ids from `first_id` on, in
    order (`convert_chunk`'s output); returns the next id."""
    entries = self.schema.entries
    for i, (record, _) in enumerate(converted):
      self.writer.write(example_bytes([entries({"unique_ids": first_id + i}),
                                       record]))
    if self.sidecar is not None:
      self.sidecar.write("".join([
          squad_records.sidecar_line(first_id + i, tail)
          for i, (_, tail) in enumerate(converted)]))
    return first_id + len(converted)


def open_outputs(stack, output_file, features_file, encoder_args):
  """Opens the TFRecord (and sidecar, with its header) in an ExitStack:
  both appear, complete, when the stack closes without an exception."""
  (_, do_lower_case, max_seq_length, doc_stride, max_query_length,
   is_training, _, _) = encoder_args
  writer = stack.enter_context(tfrecord_writer(output_file))
  sidecar = None
  if features_file:
    sidecar = stack.enter_context(atomic_output(features_file))
    sidecar.write(squad_records.sidecar_header(
        max_seq_length=max_seq_length, doc_stride=doc_stride,
        max_query_length=max_query_length, is_training=is_training,
        do_lower_case=do_lower_case))
  return _Outputs(writer, sidecar,
                  squad_schema(max_seq_length, is_training))
