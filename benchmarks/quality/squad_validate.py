"""Validation on the full shared SQuAD dev sets: counts + TFRecord round trip.

Converts dev-v1.1.json (expected 10,570 questions -> 10,833 features at
384/128/64) and dev-v2.0-subset.json with data_prep.squad.writer, then parses
every record back with tf.io.parse_single_example and compares it with the
in-memory features (and the sidecar with their tokens and maps).

Usage:
  python -m benchmarks.quality.squad_validate [--data_dir=../shared/data/squad]
"""

import os
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

from bert_tf import tokenization  # pylint: disable=g-import-not-at-top
from bert_tf.records.task_schemas import squad_schema  # pylint: disable=g-import-not-at-top
from data_prep.squad import records as squad_records  # pylint: disable=g-import-not-at-top
from data_prep.squad.example import read_squad_examples  # pylint: disable=g-import-not-at-top
from data_prep.squad.features import convert_examples_to_features  # pylint: disable=g-import-not-at-top
from data_prep.squad.writer import write_squad_features  # pylint: disable=g-import-not-at-top

FLAGS = flags.FLAGS
flags.DEFINE_string("data_dir", "../shared/data/squad", "Shared SQuAD data.")
flags.DEFINE_string("vocab_file", "tests/fixtures/vocab_uncased.txt", "Vocab.")
flags.DEFINE_integer("num_workers", 2, "Worker processes.")


def _validate(name, v2, tmp):
  path = os.path.join(FLAGS.data_dir, name)
  examples = read_squad_examples(path, False, v2)
  features = []
  convert_examples_to_features(
    examples,
    tokenization.FullTokenizer(FLAGS.vocab_file, True),
    384,
    128,
    64,
    False,
    features.append,
  )
  out = os.path.join(tmp, name + ".tf_record")
  counts = write_squad_features(
    examples,
    FLAGS.vocab_file,
    True,
    out,
    out + ".features.jsonl",
    384,
    128,
    64,
    False,
    num_workers=FLAGS.num_workers,
  )
  spec = squad_schema(384, False).parse_spec()
  n = 0
  for raw, feature in zip(tf.data.TFRecordDataset(out), features):
    parsed = tf.io.parse_single_example(raw, spec)
    assert int(parsed["unique_ids"]) == feature.unique_id
    for key in ("input_ids", "input_mask", "segment_ids"):
      assert parsed[key].numpy().tolist() == getattr(feature, key), key
    n += 1
  _, side = squad_records.read_features_sidecar(out + ".features.jsonl")
  assert all(
    a.tokens == b.tokens
    and a.token_to_orig_map == b.token_to_orig_map
    and a.token_is_max_context == b.token_is_max_context
    for a, b in zip(side, features)
  ) and len(side) == len(features)
  assert n == counts.features == len(features)
  print(
    "%s: %d questions -> %d features; all %d records round-trip"
    % (name, counts.examples, counts.features, n)
  )
  return counts


def main(_):
  tmp = tempfile.mkdtemp(prefix="squad_validate_")
  counts = _validate("dev-v1.1.json", False, tmp)
  assert counts == (10570, 10833), counts
  _validate("dev-v2.0-subset.json", True, tmp)


if __name__ == "__main__":
  app.run(main)
