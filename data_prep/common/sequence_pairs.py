"""`[CLS] a [SEP] b [SEP]` packing of word pieces, without TensorFlow.

The layout every BERT input shares: segment id 0 up to the first [SEP], 1
after it. `pack_tokens` adds the original run_classifier / extract_features
truncation (pairs: pop the last piece of the longer side, b on a tie, down
to max_seq_length - 3; singles: keep the first max_seq_length - 2).
Pre-training truncates pairs its own (random) way, then uses `pair_layout`.

Example:
    tokens, segment_ids = pack_tokens(tokenizer.tokenize(a),
                                      tokenizer.tokenize(b), 128)
"""


def truncate_seq_pair(tokens_a, tokens_b, max_length):
  """Pops from the end of the longer list (b on a tie) until both fit."""
  while len(tokens_a) + len(tokens_b) > max_length:
    if len(tokens_a) > len(tokens_b):
      tokens_a.pop()
    else:
      tokens_b.pop()


def pair_layout(tokens_a, tokens_b=None):
  """`[CLS] a [SEP]` (then `b [SEP]` unless tokens_b is None), segment ids."""
  tokens = ["[CLS]"] + tokens_a + ["[SEP]"]
  segment_ids = [0] * len(tokens)
  if tokens_b is not None:
    tokens += tokens_b + ["[SEP]"]
    segment_ids += [1] * (len(tokens_b) + 1)
  return tokens, segment_ids


def pack_tokens(tokens_a, tokens_b, max_seq_length):
  """Truncates (in place) and returns `[CLS] a [SEP] (b [SEP])`, segment ids.

  `tokens_b` None or empty means a single sequence.
  """
  if tokens_b:
    truncate_seq_pair(tokens_a, tokens_b, max_seq_length - 3)
    return pair_layout(tokens_a, tokens_b)
  del tokens_a[max_seq_length - 2 :]
  return pair_layout(tokens_a)
