"""Masked-LM + next-sentence training instances, as the original makes them.

Instance for instance identical to the original `create_pretraining_data.py`
under Python 3 with the same seed: one `random.Random` is consumed in exactly
the original order (document shuffle, one target length per document and
dupe pass, `a_end`, 50% random next with up to 10 document draws, front/back
truncation, candidate shuffle, 80/10/10 replacement, random vocab word, final
instance shuffle). Quirks kept on purpose:
  * `len(tokens)` in `num_to_predict` counts [CLS]/[SEP]; Python 3 `round`
    rounds half to even.
  * With whole-word masking a "##" piece right after the middle [SEP] joins
    the last word of segment A (the [SEP] is skipped, not a word boundary).
  * A random next segment may come from the same document after 10 failed
    draws (always, for a one-document corpus).
Only the cost differs: truncation moves two indexes instead of deleting list
heads, singleton candidates skip the group bookkeeping, and the candidate
shuffle inlines `random.Random.shuffle` (same draws; a test pins it).

Example:
    options = InstanceOptions(max_seq_length=128, dupe_factor=5)
    rng = random.Random(12345)
    instances = create_training_instances(documents, vocab_words, options, rng)
"""

import collections

from data_prep.common.sequence_pairs import pair_layout

TrainingInstance = collections.namedtuple(
  "TrainingInstance",
  [
    "tokens",
    "segment_ids",
    "masked_lm_positions",
    "masked_lm_labels",
    "is_random_next",
  ],
)

# exact_stream=False (scalable mode) shuffles only as many candidates as it
# masks: the same distribution with fewer draws, but not the original's
# random stream.
InstanceOptions = collections.namedtuple(
  "InstanceOptions",
  [
    "max_seq_length",
    "max_predictions_per_seq",
    "dupe_factor",
    "masked_lm_prob",
    "short_seq_prob",
    "do_whole_word_mask",
    "exact_stream",
  ],
  defaults=[128, 20, 10, 0.15, 0.1, False, True],
)


def generate_instances(all_documents, vocab_words, options, rng):
  """Shuffles `all_documents` in place, then yields every dupe pass' instances.

  The caller applies the original's final `rng.shuffle` to the collected
  instances (or to anything derived from them one for one).
  """
  rng.shuffle(all_documents)
  for _ in range(options.dupe_factor):
    for document_index in range(len(all_documents)):
      yield from create_instances_from_document(
        all_documents, document_index, vocab_words, options, rng
      )


def create_training_instances(all_documents, vocab_words, options, rng):
  """The original's instance list, in output order."""
  instances = list(generate_instances(all_documents, vocab_words, options, rng))
  rng.shuffle(instances)
  return instances


def create_instances_from_document(
  all_documents, document_index, vocab_words, options, rng
):
  """Instances whose segment A comes from one document."""
  document = all_documents[document_index]
  max_num_tokens = options.max_seq_length - 3
  # Mostly full sequences; sometimes shorter ones to lessen the
  # pre-training/fine-tuning length mismatch. Drawn once per document.
  target_seq_length = max_num_tokens
  if rng.random() < options.short_seq_prob:
    target_seq_length = rng.randint(2, max_num_tokens)

  instances = []
  current_chunk = []
  current_length = 0
  i = 0
  while i < len(document):
    segment = document[i]
    current_chunk.append(segment)
    current_length += len(segment)
    if i == len(document) - 1 or current_length >= target_seq_length:
      a_end = 1
      if len(current_chunk) >= 2:
        a_end = rng.randint(1, len(current_chunk) - 1)
      tokens_a = [t for seg in current_chunk[:a_end] for t in seg]

      is_random_next = len(current_chunk) == 1 or rng.random() < 0.5
      if is_random_next:
        tokens_b = _random_next_tokens(
          all_documents, document_index, target_seq_length - len(tokens_a), rng
        )
        # Segments after a_end were not used: read them again.
        i -= len(current_chunk) - a_end
      else:
        tokens_b = [t for seg in current_chunk[a_end:] for t in seg]
      tokens_a, tokens_b = truncate_pair_randomly(
        tokens_a, tokens_b, max_num_tokens, rng
      )
      tokens, segment_ids = pair_layout(tokens_a, tokens_b)
      tokens, positions, labels = create_masked_lm_predictions(
        tokens, vocab_words, options, rng
      )
      instances.append(
        TrainingInstance(tokens, segment_ids, positions, labels, is_random_next)
      )
      current_chunk = []
      current_length = 0
    i += 1
  return instances


def _random_next_tokens(all_documents, document_index, target_b_length, rng):
  """Segments from a random start in another document, up to the target."""
  for _ in range(10):
    random_document_index = rng.randint(0, len(all_documents) - 1)
    if random_document_index != document_index:
      break
  random_document = all_documents[random_document_index]
  tokens_b = []
  for j in range(
    rng.randint(0, len(random_document) - 1), len(random_document)
  ):
    tokens_b.extend(random_document[j])
    if len(tokens_b) >= target_b_length:
      break
  return tokens_b


def truncate_pair_randomly(tokens_a, tokens_b, max_num_tokens, rng):
  """Trims the longer side (B on ties) from a random end until they fit.

  Returns the truncated (tokens_a, tokens_b). Same random draws as the
  original create_pretraining_data's `truncate_seq_pair` (an in-place
  `del tokens[0]` / `pop()` loop), in linear time; not the deterministic
  `sequence_pairs.truncate_seq_pair` of run_classifier.
  """
  a_lo, a_hi, b_lo, b_hi = 0, len(tokens_a), 0, len(tokens_b)
  while (a_hi - a_lo) + (b_hi - b_lo) > max_num_tokens:
    front = rng.random() < 0.5
    if a_hi - a_lo > b_hi - b_lo:
      if front:
        a_lo += 1
      else:
        a_hi -= 1
    elif front:
      b_lo += 1
    else:
      b_hi -= 1
  return tokens_a[a_lo:a_hi], tokens_b[b_lo:b_hi]


def shuffle(items, rng, last=None):
  """`rng.shuffle(items)` with the same draws (CPython 3.11+), ~2x faster.

  Fisher-Yates from the end with `_randbelow_with_getrandbits` inlined: j is
  drawn by rejection from `getrandbits(bit_length(i + 1))`. With `last=k`
  only the last k positions are drawn: they then hold a uniform random
  sample of the items (not the original's stream).
  """
  stop = 0 if last is None else max(0, len(items) - 1 - last)
  getrandbits = rng.getrandbits
  for i in range(len(items) - 1, stop, -1):
    n = i + 1
    k = n.bit_length()
    j = getrandbits(k)
    while j >= n:
      j = getrandbits(k)
    items[i], items[j] = items[j], items[i]


def _whole_word_groups(tokens):
  """Indexes that may be masked, a "##" piece joining the previous group."""
  groups = []
  for i, token in enumerate(tokens):
    if token == "[CLS]" or token == "[SEP]":
      continue
    if groups and token.startswith("##"):
      groups[-1].append(i)
    else:
      groups.append([i])
  return groups


def _maskable_indexes(tokens):
  """Every position but those of [CLS]/[SEP]."""
  if (
    tokens[0] == "[CLS]"
    and tokens[-1] == "[SEP]"
    and tokens.count("[CLS]") == 1
    and tokens.count("[SEP]") == 2
  ):
    # [CLS] A [SEP] B [SEP] without special strings inside A or B.
    sep = tokens.index("[SEP]")
    return [*range(1, sep), *range(sep + 1, len(tokens) - 1)]
  return [i for i, t in enumerate(tokens) if t != "[CLS]" and t != "[SEP]"]


def _choose_masked_indexes(tokens, num_to_predict, options, rng):
  """Indexes to predict, in the order the original draws replacements."""
  if not options.do_whole_word_mask:
    # Single-index groups: the original's walk takes the first ones.
    candidates = _maskable_indexes(tokens)
    if not options.exact_stream:
      shuffle(candidates, rng, last=num_to_predict)
      return candidates[max(0, len(candidates) - num_to_predict) :]
    shuffle(candidates, rng)
    return candidates[:num_to_predict]
  groups = _whole_word_groups(tokens)
  shuffle(groups, rng)
  chosen = []
  for group in groups:
    if len(chosen) >= num_to_predict:
      break
    # Groups partition the indexes, so none is ever already covered.
    if len(chosen) + len(group) <= num_to_predict:
      chosen.extend(group)
  return chosen


def create_masked_lm_predictions(tokens, vocab_words, options, rng):
  """Returns (output tokens, sorted masked positions, original labels)."""
  num_to_predict = min(
    options.max_predictions_per_seq,
    max(1, int(round(len(tokens) * options.masked_lm_prob))),
  )
  chosen = _choose_masked_indexes(tokens, num_to_predict, options, rng)
  output_tokens = list(tokens)
  for index in chosen:
    if rng.random() < 0.8:
      output_tokens[index] = "[MASK]"
    elif rng.random() < 0.5:
      pass  # 10%: keep the original token.
    else:
      output_tokens[index] = vocab_words[rng.randint(0, len(vocab_words) - 1)]
  positions = sorted(chosen)
  return output_tokens, positions, [tokens[p] for p in positions]
