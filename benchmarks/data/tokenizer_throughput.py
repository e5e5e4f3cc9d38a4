r"""Tokenizer throughput on the contexts and questions of SQuAD dev.

Prints lines/s for
  (a) FullTokenizer(use_cache=False): the original algorithm,
  (b) FullTokenizer with its per-word cache (starting empty),
  (c) TfTextTokenizer, in-graph, on batches inside one tf.function,
  (d) HuggingFace `tokenizers` BertWordPieceTokenizer.encode_batch, if
      importable (it is not a dependency; e.g. `pip install --target DIR
      tokenizers` and run with PYTHONPATH=DIR),
and the ratios (b)/(a) (target >= 5) and (c)/(d) (target >= 1). Every path
produces ids; (c) and (d) are checked against (a) before timing.

  python -m benchmarks.data.tokenizer_throughput \
      --squad_file=../shared/data/squad/dev-v1.1.json
"""

import json
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags
import tensorflow as tf

from bert_tf.io_utils import require_file
from bert_tf.io_utils import run_cli
from bert_tf.tokenizers import tokenization
from bert_tf.tokenizers.tf_text_tokenizer import TfTextTokenizer

FLAGS = flags.FLAGS
flags.DEFINE_string(
  "squad_file",
  "../shared/data/squad/dev-v1.1.json",
  "SQuAD JSON whose contexts and questions are tokenized.",
)
flags.DEFINE_string(
  "vocab_file", "tests/fixtures/vocab_uncased.txt", "WordPiece vocab."
)
flags.DEFINE_bool("do_lower_case", True, "Lower-case the input.")
flags.DEFINE_integer("batch_size", 1024, "Lines per in-graph batch for (c).")
flags.DEFINE_integer("repeats", 3, "Timed passes for (c) and (d); best kept.")


def read_squad_lines(path):
  with open(path, "rb") as f:
    data = json.loads(f.read().decode("utf-8"))["data"]
  lines = []
  for article in data:
    for paragraph in article["paragraphs"]:
      lines.append(paragraph["context"])
      lines.extend(qa["question"] for qa in paragraph["qas"])
  return lines


def best_rate(fn, n_lines, repeats):
  """Lines/s of the fastest of `repeats` runs of fn()."""
  best = float("inf")
  for _ in range(repeats):
    start = time.perf_counter()
    fn()
    best = min(best, time.perf_counter() - start)
  return n_lines / best


def python_ids(lines, use_cache):
  tokenizer = tokenization.FullTokenizer(
    FLAGS.vocab_file, FLAGS.do_lower_case, use_cache=use_cache
  )
  return [
    tokenizer.convert_tokens_to_ids(tokenizer.tokenize(line)) for line in lines
  ]


def tf_text_fn(lines):
  """Returns a callable that tokenizes all lines in-graph, batch by batch."""
  tokenizer = TfTextTokenizer(FLAGS.vocab_file, FLAGS.do_lower_case)
  ids_fn = tf.function(
    tokenizer.call, input_signature=[tf.TensorSpec([None], tf.string)]
  )
  n = FLAGS.batch_size
  batches = [tf.constant(lines[i : i + n]) for i in range(0, len(lines), n)]
  return lambda: [ids_fn(batch) for batch in batches]


def hf_fn(lines):
  """Returns HF's encode_batch on all lines, or None when not importable."""
  try:
    # pylint: disable-next=g-import-not-at-top
    from tokenizers import BertWordPieceTokenizer
  except ImportError:
    return None
  tokenizer = BertWordPieceTokenizer(
    FLAGS.vocab_file, lowercase=FLAGS.do_lower_case
  )
  return lambda: tokenizer.encode_batch(lines, add_special_tokens=False)


def count_mismatches(expected, actual):
  return sum(e != a for e, a in zip(expected, actual))


def main(_):
  require_file(FLAGS.squad_file, "squad_file")
  require_file(FLAGS.vocab_file, "vocab_file")
  lines = read_squad_lines(FLAGS.squad_file)
  n = len(lines)
  print(
    "%d lines (contexts + questions), do_lower_case=%s, %d CPUs"
    % (n, FLAGS.do_lower_case, os.cpu_count())
  )

  start = time.perf_counter()
  expected = python_ids(lines, use_cache=False)
  rate_a = n / (time.perf_counter() - start)
  start = time.perf_counter()
  cached = python_ids(lines, use_cache=True)
  rate_b = n / (time.perf_counter() - start)
  assert cached == expected, "cached FullTokenizer differs from the original"
  print("(a) FullTokenizer, no cache : %10.0f lines/s" % rate_a)
  print("(b) FullTokenizer, cache    : %10.0f lines/s" % rate_b)

  run_c = tf_text_fn(lines)
  got = [row for batch in run_c() for row in batch.to_list()]
  rate_c = best_rate(run_c, n, FLAGS.repeats)
  print(
    "(c) TfTextTokenizer, batched : %10.0f lines/s (batch %d; %d lines "
    "differ from (a))"
    % (rate_c, FLAGS.batch_size, count_mismatches(expected, got))
  )

  run_d = hf_fn(lines)
  if run_d is None:
    print("(d) HF tokenizers           : not installed")
  else:
    got = [enc.ids for enc in run_d()]
    rate_d = best_rate(run_d, n, FLAGS.repeats)
    print(
      "(d) HF BertWordPiece batch  : %10.0f lines/s (%d lines differ from "
      "(a))" % (rate_d, count_mismatches(expected, got))
    )
  print("(b)/(a) = %.2f (target >= 5)" % (rate_b / rate_a))
  if run_d is not None:
    print("(c)/(d) = %.2f (target >= 1)" % (rate_c / rate_d))


if __name__ == "__main__":
  app.run(run_cli(main))
