"""Sentences -> word-piece windows with per-word labels, as the BERT paper.

Each word is WordPiece-tokenized; its label sits on its first piece, the
other pieces carry no label (weight 0), and its prediction is read from the
first piece. A window is `[CLS] pieces [SEP]`, at most max_seq_length long,
segment ids 0.

A sentence longer than the window is cut into overlapping windows at word
boundaries, each starting about half a window after the previous one. A word
in several windows is predicted (and trained) only in the one where it has
the most context (SQuAD's max-context rule: the largest min(left, right)
pieces, then the longest window), so every word is predicted exactly once.
A word of more pieces than fit is truncated to its first pieces.

Spare room in a window is filled with context words, alternately from the
left and the right, taken from the rest of the sentence or, with
`document_context`, from the neighbouring sentences of the same document
(the paper's "maximal document context"). Context words have no label or
weight.

Example:
    featurizer = Featurizer(tokenizer, labels, max_seq_length=128,
                            document_context=True)
    windows = featurizer.windows(sentences)
    windows[0].input_ids, windows[0].label_ids, windows[0].label_weights
    windows[0].predicted   # [(position of first piece, word index)]
"""

import collections
import itertools

from bert_tf.io_utils import InputError
from bert_tf.tokenizers.loading import load_tokenizer

# `sentence`: index into the featurized sentences; `input_ids`, `label_ids`,
# `label_weights` are unpadded ([CLS] ... [SEP]); `predicted`: the
# (position, word index) of each word this window predicts.
Window = collections.namedtuple(
  "Window", "sentence input_ids label_ids label_weights predicted"
)


def core_windows(lengths, capacity):
  """[(start, end)] word ranges covering all words, each fitting `capacity`
  pieces (a longer single word is one window), each starting about half a
  window after the previous one and no later than its end."""
  stride = max(1, capacity // 2)
  windows = []
  start = 0
  while True:
    end, used = start, 0
    while end < len(lengths) and used + lengths[end] <= capacity:
      used += lengths[end]
      end += 1
    end = max(end, start + 1)
    windows.append((start, end))
    if end >= len(lengths):
      return windows
    skipped = 0
    while start < end and skipped < stride:
      skipped += lengths[start]
      start += 1


def extend(start, end, lengths, capacity):
  """(start, end) grown by whole words, alternately left and right, while
  they fit; a side stops at its first word that does not fit."""
  room = capacity - sum(lengths[start:end])
  grow_left = grow_right = True
  while grow_left or grow_right:
    grow_left = start > 0 and lengths[start - 1] <= room
    if grow_left:
      start -= 1
      room -= lengths[start]
    grow_right = end < len(lengths) and lengths[end] <= room
    if grow_right:
      room -= lengths[end]
      end += 1
  return start, end


def owners(windows, first, last, offsets):
  """For each word in [first, last): the index of the window where it has
  the most context (min of the pieces left and right of it, then the
  window's length; the earlier window on a tie). `offsets[i]`: where word i
  starts in the concatenated pieces."""
  result = []
  for word in range(first, last):
    best, best_score = None, None
    for index, (start, end) in enumerate(windows):
      if start <= word < end:
        left = offsets[word] - offsets[start]
        right = offsets[end] - offsets[word + 1]
        score = min(left, right) + 0.01 * (offsets[end] - offsets[start])
        if best_score is None or score > best_score:
          best, best_score = index, score
    result.append(best)
  return result


class _Stream:
  """The words of a sentence or document: piece ids, lengths, offsets."""

  def __init__(self, pieces):
    self.pieces = pieces
    self.lengths = [len(p) for p in pieces]
    self.offsets = list(itertools.accumulate(self.lengths, initial=0))


class Featurizer:
  """Turns Sentences into Windows for one tokenizer and label list."""

  def __init__(self, tokenizer, labels, max_seq_length, document_context=False):
    if max_seq_length < 3:
      raise InputError(
        "--max_seq_length=%d: must be at least 3" % max_seq_length
      )
    self.tokenizer = tokenizer
    self.label_map = {label: i for i, label in enumerate(labels)}
    self.capacity = max_seq_length - 2
    self.document_context = document_context
    self.cls_id, self.sep_id, self.unk_id = tokenizer.convert_tokens_to_ids(
      ["[CLS]", "[SEP]", "[UNK]"]
    )

  def word_ids(self, word):
    """Piece ids of one word (a word that cleans to nothing is [UNK])."""
    ids = self.tokenizer.convert_tokens_to_ids(self.tokenizer.tokenize(word))
    return ids[: self.capacity] or [self.unk_id]

  def windows(self, sentences):
    """All Windows, sentence by sentence in order."""
    result = []
    for group in self._streams(sentences):
      pieces = [self.word_ids(w) for i in group for w in sentences[i].words]
      stream = _Stream(pieces)
      first = 0
      for index in group:
        result.extend(
          self._sentence_windows(index, sentences[index], stream, first)
        )
        first += len(sentences[index].words)
    return result

  def _streams(self, sentences):
    """Groups of sentence indices whose words may be each other's context:
    the sentences of one document, or each sentence alone."""
    if not self.document_context:
      return [[i] for i in range(len(sentences))]
    groups = []
    for i, sentence in enumerate(sentences):
      if i and sentence.document == sentences[i - 1].document:
        groups[-1].append(i)
      else:
        groups.append([i])
    return groups

  def _sentence_windows(self, index, sentence, stream, first):
    """Windows predicting words first .. first+len-1 of the stream."""
    last = first + len(sentence.words)
    spans = [
      extend(first + start, first + end, stream.lengths, self.capacity)
      for start, end in core_windows(stream.lengths[first:last], self.capacity)
    ]
    owner = owners(spans, first, last, stream.offsets)
    pieces = stream.pieces
    windows = []
    for number, (start, end) in enumerate(spans):
      input_ids = [self.cls_id]
      label_ids = [0]
      weights = [0.0]
      predicted = []
      for word in range(start, end):
        ids = pieces[word]
        label, weight = 0, 0.0
        if first <= word < last and owner[word - first] == number:
          position = word - first
          predicted.append((len(input_ids), position))
          weight = 1.0
          if sentence.tags is not None:
            label = self.label_map[sentence.tags[position]]
        input_ids.extend(ids)
        label_ids.extend([label] + [0] * (len(ids) - 1))
        weights.extend([weight] + [0.0] * (len(ids) - 1))
      windows.append(
        Window(
          index,
          input_ids + [self.sep_id],
          label_ids + [0],
          weights + [0.0],
          predicted,
        )
      )
    return windows


def new_featurizer(tokenizer_args, labels, max_seq_length, document_context):
  """A Featurizer from picklable settings (what Beam workers receive);
  `tokenizer_args` are `load_tokenizer`'s."""
  return Featurizer(
    load_tokenizer(*tokenizer_args), labels, max_seq_length, document_context
  )
