"""Reads CoNLL-format tagging files (CoNLL-2003 NER and the like).

One word per line, whitespace-separated columns, the word first and its tag
last (`token POS chunk tag` as CoNLL-2003, or `token tag`); a blank line
ends a sentence; a `-DOCSTART-` line starts a document. Every word line of a
file has the same number of columns. A file whose lines hold only the word
has no tags (for `--do_predict` on unlabelled text). Tags are IOB: `O`,
`B-TYPE`, `I-TYPE`; IOB1 files (`--tag_scheme=iob1`, where `B-` only
separates two adjacent entities of one type) are converted to IOB2 on read.

Example:
    sentences = read_conll("conll2003/train.txt", tag_scheme="iob2")
    labels = label_list(sentences)       # O, B-LOC, I-LOC, B-MISC, ...
    check_tags(read_conll("valid.txt"), labels)
    sentences[0].words, sentences[0].tags, sentences[0].document
"""

import collections

from absl import logging

from bert_tf.io_utils import decode_text
from bert_tf.io_utils import InputError

TAG_SCHEMES = ("iob1", "iob2")
DOCSTART = "-DOCSTART-"

# words/tags: lists (tags None for an unlabelled file); document: index of
# the -DOCSTART- section (0 without any); lines: line number of each word.
Sentence = collections.namedtuple("Sentence", "words tags document lines path")


def entity_type(tag):
  """`PER` for `B-PER` / `I-PER`; None for `O`."""
  return None if tag == "O" else tag[2:]


def iob1_to_iob2(tags):
  """IOB2 tags: an `I-X` that does not continue an X entity becomes `B-X`."""
  converted = []
  previous = "O"
  for tag in tags:
    if tag.startswith("I-") and entity_type(previous) != tag[2:]:
      tag = "B-" + tag[2:]
    converted.append(tag)
    previous = tag
  return converted


def _is_iob(tag):
  return tag == "O" or (tag[:2] in ("B-", "I-") and len(tag) > 2)


class _SentenceBuilder:
  """Collects the word lines of one file into Sentences."""

  def __init__(self, path, tag_scheme):
    self.path = path
    self.tag_scheme = tag_scheme
    self.columns = None  # set by the first word line
    self.document = 0
    self.seen_docstart = False
    self.sentences = []
    self.words, self.tags, self.lines = [], [], []
    # Read as IOB2: (count, first line) of I- tags that start an entity.
    self.iob1_starts = (0, None)

  def add_line(self, number, fields):
    if fields[0] == DOCSTART:
      self.end_sentence()
      self.document += self.seen_docstart
      self.seen_docstart = True
      return
    if self.columns is None:
      self.columns = len(fields)
    if len(fields) != self.columns:
      raise InputError(
        "%s:%d: malformed line: %d columns, the file's first word line has "
        "%d (word first, tag last, whitespace-separated)"
        % (self.path, number, len(fields), self.columns)
      )
    if self.columns > 1 and not _is_iob(fields[-1]):
      raise InputError(
        "%s:%d: tag %r is not IOB (O, B-TYPE or I-TYPE)"
        % (self.path, number, fields[-1])
      )
    self.words.append(fields[0])
    self.tags.append(fields[-1])
    self.lines.append(number)

  def end_sentence(self):
    if not self.words:
      return
    tags = None
    if self.columns > 1:
      converted = iob1_to_iob2(self.tags)
      tags = converted if self.tag_scheme == "iob1" else self.tags
      starts = [
        line
        for line, tag, new in zip(self.lines, self.tags, converted)
        if tag != new
      ]
      if starts and self.tag_scheme == "iob2":
        count, first = self.iob1_starts
        self.iob1_starts = (count + len(starts), first or starts[0])
    self.sentences.append(
      Sentence(self.words, tags, self.document, self.lines, self.path)
    )
    self.words, self.tags, self.lines = [], [], []


def read_conll(path, tag_scheme="iob2"):
  """Returns the file's Sentences, in file order.

  Raises:
    InputError: missing, non-UTF-8 or empty file, a malformed line or a
      non-IOB tag (file and line named).
  """
  if tag_scheme not in TAG_SCHEMES:
    raise InputError(
      "--tag_scheme=%s: expected one of %s"
      % (tag_scheme, ", ".join(TAG_SCHEMES))
    )
  builder = _SentenceBuilder(path, tag_scheme)
  try:
    with open(path, "rb") as f:
      for number, raw in enumerate(f, 1):
        fields = decode_text(raw, path, number).split()
        if fields:
          builder.add_line(number, fields)
        else:
          builder.end_sentence()
  except (FileNotFoundError, IsADirectoryError) as e:
    raise InputError("%s: no such file" % path) from e
  builder.end_sentence()
  if not builder.sentences:
    raise InputError("%s: no sentences" % path)
  count, first = builder.iob1_starts
  if count:
    logging.warning(
      "%s:%d: %d entities start with I- (first here): an IOB1 "
      "file read as IOB2? --tag_scheme=iob1 converts it",
      path,
      first,
      count,
    )
  return builder.sentences


def is_labelled(sentences):
  return sentences[0].tags is not None


def label_list(sentences):
  """`O`, then `B-X`, `I-X` for every entity type X of the file, sorted.

  Both prefixes are listed for every type seen, so a dev entity of a known
  type is never an unknown tag.
  """
  types = sorted({entity_type(t) for s in sentences for t in s.tags} - {None})
  return ["O"] + [prefix + t for t in types for prefix in ("B-", "I-")]


def parse_labels(text):
  """The `--labels=O,B-PER,I-PER,...` list, checked."""
  labels = [label.strip() for label in text.split(",") if label.strip()]
  bad = [label for label in labels if not _is_iob(label)]
  if bad or "O" not in labels or len(set(labels)) != len(labels):
    raise InputError(
      "--labels=%s: need distinct IOB tags (O, B-TYPE, "
      "I-TYPE) including O" % text
    )
  return labels


def check_tags(sentences, labels):
  """InputError naming the file and line of the first tag not in `labels`."""
  known = set(labels)
  for sentence in sentences:
    for tag, line in zip(sentence.tags, sentence.lines):
      if tag not in known:
        raise InputError(
          "%s:%d: unknown tag %r (labels: %s)"
          % (sentence.path, line, tag, " ".join(labels))
        )
