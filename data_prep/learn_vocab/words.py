"""Word counts of a corpus, split as the original BasicTokenizer splits.

The vocabulary learner sees the words the original `FullTokenizer` hands to
WordPiece: text cleaned, CJK characters spaced, accents stripped and
lower-cased when `do_lower_case`, split on whitespace and punctuation. Lines
are read as the pre-training reader reads them (split on "\\n", strict UTF-8
with file:line errors). TensorFlow-free.

Example:
    counts = count_words(plan_shards(files, 16 << 20), do_lower_case=True)
    reserved_tokens(994)[100]  # "[UNK]"
"""

import collections

from bert_tf.io_utils import decode_text
from bert_tf.tokenizers.tokenization import BasicTokenizer
from data_prep.pretraining.documents import shard_lines

# Google's vocabularies: [PAD]=0, [unused0..98]=1..99, [UNK]=100, [CLS]=101,
# [SEP]=102, [MASK]=103, then the remaining [unusedN] (uncased: up to
# [unused993] at 998).
SPECIAL_TOKENS = ("[UNK]", "[CLS]", "[SEP]", "[MASK]")
UNUSED_BEFORE_SPECIALS = 99


def reserved_tokens(num_unused):
  """The reserved head of a vocabulary with `num_unused` [unusedN] tokens
  (at least 99, so [UNK]..[MASK] keep ids 100..103)."""
  unused = ["[unused%d]" % i for i in range(num_unused)]
  return (
    ["[PAD]"]
    + unused[:UNUSED_BEFORE_SPECIALS]
    + list(SPECIAL_TOKENS)
    + unused[UNUSED_BEFORE_SPECIALS:]
  )


def shard_text_lines(shard):
  """The decoded, stripped, non-empty lines of a `documents.Shard`."""
  where = (
    shard.path
    if not shard.start
    else "%s (from byte %d)" % (shard.path, shard.start)
  )
  for number, line in enumerate(shard_lines(shard), 1):
    line = decode_text(line, where, number).strip()
    if line:
      yield line


def count_shard_words(shard, do_lower_case):
  """Counter {word: occurrences} of one shard."""
  tokenizer = BasicTokenizer(do_lower_case=do_lower_case)
  counts = collections.Counter()
  for line in shard_text_lines(shard):
    counts.update(tokenizer.tokenize(line))
  return counts


def count_words(shards, do_lower_case):
  """Counter {word: occurrences} of all `shards`."""
  counts = collections.Counter()
  for shard in shards:
    counts.update(count_shard_words(shard, do_lower_case))
  return counts
