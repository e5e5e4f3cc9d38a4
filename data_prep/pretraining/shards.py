"""Scalable pre-training data: shards in parallel worker processes.

Each shard (an input file, or a piece of one cut at a blank line) is read,
tokenized and turned into instances by one worker with its own
`random.Random(shard_seed(random_seed, shard_index))`, using the original's
algorithm within the shard: random next segments come from the same shard,
and the shard's instances are shuffled before writing. Memory is bounded by
one shard per worker, and shard i goes to `<output>-0000i-of-0000N`: under
a temporary name until every shard is complete (data_prep/common/outputs.py).
The same per-shard function runs in the Beam driver (data_prep/beam).

Input files are taken in sorted path order. The output is deterministic for
a given seed, input, `--shard_size_mb` and worker count (the worker count
sets how finely a big file is cut), but it is not the original's
single-stream order: use `--num_workers=0` for that. Unlike the original, a
document never continues from one file into the next, and the masked
positions are drawn with a partial shuffle (same distribution, fewer draws).

Example:
    shards = plan_shards(files, max_shard_bytes=16 << 20, min_shards=2)
    stats, files = write_shards(shards, "out/train.tfrecord", tokenizer_args,
                                options, random_seed=12345, num_workers=2)
"""

import hashlib
import multiprocessing
import random
import sys

from tqdm import tqdm

from bert_tf.records.tfrecord_file import tfrecord_writer
from bert_tf.tokenizers.loading import load_tokenizer
from data_prep.common.outputs import die_with_parent
from data_prep.common.outputs import publish
from data_prep.common.outputs import remove_temps
from data_prep.common.outputs import shard_names
from data_prep.common.outputs import temp_name
from data_prep.pretraining.documents import read_documents
from data_prep.pretraining.records import make_records
from data_prep.pretraining.records import RecordStats

_worker_state = {}


def shard_seed(random_seed, shard_index):
  """A 64-bit seed from the run's seed and the shard index."""
  digest = hashlib.sha256(b"%d:%d" % (random_seed, shard_index)).digest()
  return int.from_bytes(digest[:8], "little")


def _init_worker(tokenizer_args, options, random_seed, temps):
  die_with_parent(temps)
  _worker_state.update(
    tokenizer=load_tokenizer(*tokenizer_args),
    options=options,
    random_seed=random_seed,
  )


def build_shard(index, shard, output_file, tokenizer, options, random_seed):
  """One shard in, one TFRecord file out; returns its RecordStats. The
  per-shard step of this pool."""
  return build_shards(
    [(index, shard)], output_file, tokenizer, options, random_seed
  )


def build_shards(indexed_shards, output_file, tokenizer, options, random_seed):
  """[(index, shard)] in, one TFRecord file out: each shard's records as
  `build_shard` makes them, one shard after the other (none: an empty
  file); returns the summed RecordStats. The Beam driver's step."""
  totals = RecordStats(0, 0, 0)
  with tfrecord_writer(output_file) as writer:
    for index, shard in indexed_shards:
      documents = read_documents([shard], tokenizer, progress=False)
      rng = random.Random(shard_seed(random_seed, index))
      records, stats = make_records(documents, tokenizer, options, rng)
      for record in records:
        writer.write(record)
      totals = RecordStats(*(a + b for a, b in zip(totals, stats)))
  return totals


def _build_shard(task):
  index, shard, output_file = task
  state = _worker_state
  return build_shard(
    index,
    shard,
    output_file,
    state["tokenizer"],
    state["options"],
    state["random_seed"],
  )


def _context():
  # Fork is cheapest, but not once TensorFlow (and its threads) is loaded.
  method = "spawn" if "tensorflow" in sys.modules else "fork"
  return multiprocessing.get_context(method)


def write_shards(
  shards,
  output_file,
  tokenizer_args,
  options,
  random_seed,
  num_workers,
  progress=True,
):
  """Builds every shard in `num_workers` processes; returns RecordStats."""
  outputs = shard_names(output_file, len(shards))
  temps = [temp_name(path) for path in outputs]
  totals = [0, 0, 0]
  init_args = (tokenizer_args, options, random_seed, temps)
  try:
    with (
      _context().Pool(
        min(num_workers, len(shards)), _init_worker, init_args
      ) as pool,
      tqdm(
        total=len(shards),
        unit=" shards",
        desc="shards",
        disable=None if progress else True,
      ) as bar,
    ):
      tasks = [(i, shard, temps[i]) for i, shard in enumerate(shards)]
      for stats in pool.imap_unordered(_build_shard, tasks):
        totals = [t + s for t, s in zip(totals, stats)]
        bar.set_postfix(instances=totals[1])
        bar.update(1)
  except BaseException:
    remove_temps(temps)
    raise
  # Every shard is complete: only now do they get their names.
  publish(temps, outputs, output_file)
  return RecordStats(*totals), outputs
