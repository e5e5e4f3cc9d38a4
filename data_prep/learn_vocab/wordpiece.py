"""WordPiece vocabulary from word counts: tensorflow-text's learner.

`tensorflow_text.tools.wordpiece_vocab.wordpiece_tokenizer_learner_lib.learn`
(the algorithm behind `bert_vocab_from_dataset`) binary-searches a count
threshold whose vocabulary fits `vocab_size` (within 5% below it, or
smaller when even its lowest threshold, 10 occurrences, gives fewer) and
lists the reserved tokens first, then every character of the corpus (alone
and as "##" suffix), then the learned pieces by count. The learner itself is
plain Python, but importing it loads the tensorflow_text package and with it
TensorFlow: it is imported when a vocabulary is learnt, so this module (and
data_prep) imports TensorFlow-free.

The counts are sorted by word before learning, so the result depends only on
the counts, not on how (or in which runner) they were gathered.

Example:
    vocab = learn_wordpiece(count_words(shards, True), 8000, 99)
"""

from bert_tf.io_utils import InputError
from data_prep.learn_vocab.words import reserved_tokens


def learn_wordpiece(word_counts, vocab_size, num_unused, source="--input_file"):
  """The vocabulary (list of tokens, id order) for `word_counts` (of input
  `source`, for messages).

  Raises:
    InputError: no words, or `vocab_size` below what the reserved tokens and
      the corpus's characters alone need.
  """
  if not word_counts:
    raise InputError("%s: no words to learn a vocabulary from" % source)
  # Loads TensorFlow (see the module docstring): only now.
  from tensorflow_text.tools.wordpiece_vocab import (
    wordpiece_tokenizer_learner_lib,
  )

  reserved = reserved_tokens(num_unused)
  vocab = wordpiece_tokenizer_learner_lib.learn(
    sorted(word_counts.items()), vocab_size, reserved
  )
  if len(vocab) > vocab_size:
    raise InputError(
      "--vocab_size=%d is too small: with the %d reserved tokens and "
      "every character of the corpus (also as a ## suffix) the smallest "
      "vocabulary has %d tokens" % (vocab_size, len(reserved), len(vocab))
    )
  return vocab


def write_vocab(vocab, file_object):
  """One token per line, as the original vocab.txt."""
  file_object.write("".join(token + "\n" for token in vocab))
